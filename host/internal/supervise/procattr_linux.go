package supervise

import "syscall"

// workerProcAttr puts the worker's reaper in its own process group, so that
// SIGTERM reaches the reaper, the worker and what the worker started that
// stayed in the group. No parent-death signal here: the reaper learns of
// the host's death from its control pipe and must live to end the
// worker's processes; the worker gets SIGKILL when the reaper dies.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
