package supervise

import "syscall"

// workerProcAttr puts the worker in its own process group (so the whole
// group can be stopped, grandchildren included) and has the kernel kill it
// when the host dies, even by SIGKILL.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
