//go:build unix

package supervise

import (
	"os"
	"syscall"
)

// signalGroup sends sig to the worker's whole process group.
func (w *process) signalGroup(sig syscall.Signal) error {
	return syscall.Kill(-w.pid(), sig)
}

// terminate asks the worker's group to stop.
func (w *process) terminate() error { return w.signalGroup(syscall.SIGTERM) }

// killGroup kills what is left of the worker's group.
func (w *process) killGroup() error {
	err := w.signalGroup(syscall.SIGKILL)
	if err == syscall.ESRCH {
		return os.ErrProcessDone
	}
	return err
}
