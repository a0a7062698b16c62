//go:build unix

package supervise

import (
	"os"
	"syscall"
	"time"
)

// signalGroup sends sig to the worker's whole process group.
func (w *process) signalGroup(sig syscall.Signal) error {
	return syscall.Kill(-w.pid(), sig)
}

// terminate asks the worker's group to stop.
func (w *process) terminate() error { return w.signalGroup(syscall.SIGTERM) }

// killSignal kills a process group.
const killSignal = syscall.SIGKILL

// reaperKillWait is how long the reaper may take to end the worker's tree
// before its whole group is killed.
const reaperKillWait = 5 * time.Second

// killGroup kills the worker and what it started: through the reaper when
// there is one (it also ends the processes that left the group), else, or
// when the reaper does not exit in time, by killing the group.
func (w *process) killGroup() error {
	if w.control != nil {
		select {
		case <-w.done:
			return os.ErrProcessDone
		default:
		}
		w.closeControl()
		time.AfterFunc(reaperKillWait, func() {
			select {
			case <-w.done:
			default:
				_ = w.signalGroup(syscall.SIGKILL)
			}
		})
		return nil
	}
	err := w.signalGroup(syscall.SIGKILL)
	if err == syscall.ESRCH {
		return os.ErrProcessDone
	}
	return err
}
