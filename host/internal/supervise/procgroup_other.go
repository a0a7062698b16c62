//go:build !unix

package supervise

import "syscall"

func workerProcAttr() *syscall.SysProcAttr { return nil }

// terminate stops the worker (no signals here: it is killed).
func (w *process) terminate() error { return w.cmd.Process.Kill() }

// killGroup kills the worker.
func (w *process) killGroup() error { return w.cmd.Process.Kill() }

// killSignal is unused here: signalGroup kills.
const killSignal = 0

// signalGroup kills the worker (no process groups here).
func (w *process) signalGroup(int) error { return w.cmd.Process.Kill() }
