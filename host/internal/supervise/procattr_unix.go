//go:build unix && !linux

package supervise

import "syscall"

// workerProcAttr puts the worker in its own process group, so the whole
// group can be stopped, grandchildren included. (No parent-death signal
// outside Linux.)
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
