//go:build !unix

package host

import "syscall"

func workerProcAttr() *syscall.SysProcAttr { return nil }

// terminate stops the worker (no signals here: it is killed).
func (w *workerProcess) terminate() error { return w.cmd.Process.Kill() }

// killGroup kills the worker.
func (w *workerProcess) killGroup() error { return w.cmd.Process.Kill() }
