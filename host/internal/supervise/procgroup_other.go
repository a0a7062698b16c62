//go:build !unix

package supervise

import "syscall"

func workerProcAttr() *syscall.SysProcAttr { return nil }

// terminate stops the worker (no signals here: it is killed).
func (w *process) terminate() error { return w.cmd.Process.Kill() }

// killGroup kills the worker.
func (w *process) killGroup() error { return w.cmd.Process.Kill() }
