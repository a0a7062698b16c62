//go:build linux

package reaper

import (
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// On Linux the worker does not run as the host's child but as the child of
// a reaper: the host's own executable started again in the mode below (the
// pattern of a re-exec'd init). The reaper is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so every process the worker starts, and every
// process those start, stays its descendant however it detaches (a double
// fork, setsid, its own process group). It ends them all, by pid, when
//
//   - the worker exits: the reaper then exits with the worker's status;
//   - the host closes the reaper's control pipe, or dies: the kernel closes
//     the pipe whatever ended the host, SIGKILL included, so that nothing
//     the worker started outlives the host.
//
// The worker also gets SIGKILL if the reaper dies (parent-death signal).
// SIGTERM, SIGINT and SIGHUP sent to the process group reach the worker
// directly; the reaper ignores them and waits for the worker.

// Arg0 is the argv[0] that starts the reaper mode. The rest of argv is
// the worker's command line; fd 3 is the control pipe.
const Arg0 = "funcmcp-worker-reaper"

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

func init() {
	if len(os.Args) >= 2 && os.Args[0] == Arg0 {
		os.Exit(runReaper(os.Args[1:]))
	}
}

// runReaper is the reaper's main; args is the worker's command line.
func runReaper(args []string) int {
	// Non-blocking, the pipe is read through the runtime's poller instead
	// of a thread blocked in read(2) for the worker's whole life.
	_ = syscall.SetNonblock(3, true)
	control := os.NewFile(3, "control")
	syscall.CloseOnExec(3) // not the worker's
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		_, _ = os.Stderr.WriteString("funchost: cannot keep the worker's processes together (prctl: " + errno.Error() + "); they may outlive the host\n")
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// init runs on the main thread, which lives as long as the process: the
	// parent-death signal, tied to the forking thread, fires only when the
	// reaper dies.
	proc, err := os.StartProcess(args[0], args, &os.ProcAttr{
		Env:   os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		_, _ = os.Stderr.WriteString("funchost: starting the worker " + args[0] + ": " + err.Error() + "\n")
		return 127
	}
	hostGone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, control) // returns when the host closes it or dies
		close(hostGone)
	}()
	// SIGCHLD signals can merge; a slow tick reaps whatever one missed.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case sig := <-sigs:
			if sig != syscall.SIGCHLD {
				continue // the worker, in the same process group, has it too
			}
		case <-tick.C:
		case <-hostGone:
			killDescendants()
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			return 137
		}
		if status, exited := reapChildren(proc.Pid); exited {
			killDescendants()
			return exitCode(status)
		}
	}
}

// reapChildren waits for every child that has exited (the worker, and the
// orphans that a subreaper inherits) and reports the worker's status once
// it has exited.
func reapChildren(worker int) (status syscall.WaitStatus, exited bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return status, exited
		}
		if pid == worker {
			status, exited = ws, true
		}
	}
}

// exitCode ends the reaper as the worker ended: with its exit code, or by
// its signal.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		sig := ws.Signal()
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		return 128 + int(sig) // a signal the runtime does not die of
	}
	return ws.ExitStatus()
}

// killDescendants kills every process below the reaper, by pid, until none
// is left: a process that forks while it happens is found in the next
// round, and an orphan comes back to the reaper, which reaps it.
func killDescendants() {
	self := os.Getpid()
	for range 500 {
		pids := descendants(self)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		reapChildren(0)
		time.Sleep(2 * time.Millisecond)
	}
}

// descendants lists the live (not zombie) processes below root, from /proc.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, ok := atoi(e.Name())
		if !ok {
			continue
		}
		ppid, zombie, ok := ProcParent(pid)
		if ok && !zombie {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// ProcParent reads the parent and the state of pid from /proc/<pid>/stat:
// "pid (comm) state ppid …", where comm may hold spaces and parentheses.
func ProcParent(pid int) (ppid int, zombie, ok bool) {
	data, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	i := len(data) - 1
	for i >= 0 && data[i] != ')' {
		i--
	}
	if i < 0 {
		return 0, false, false
	}
	state, rest := field(data[i+1:])
	parent, _ := field(rest)
	if len(state) == 0 {
		return 0, false, false
	}
	ppid, ok = atoi(string(parent))
	return ppid, state[0] == 'Z' || state[0] == 'X', ok
}

// The reaper parses numbers and fields itself: strconv and strings would
// make its init wait for the packages that initialise unicode's tables,
// and everything ready by then would initialise before it (see doc.go).

// field returns the first space-separated field of b and what follows it.
func field(b []byte) (f, rest []byte) {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	n := 0
	for n < len(b) && b[n] != ' ' && b[n] != '\n' {
		n++
	}
	return b[:n], b[n:]
}

// atoi parses a non-negative decimal number of at most 18 digits.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// itoa formats a non-negative number in decimal.
func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
