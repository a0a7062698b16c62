//go:build linux

package reaper

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
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
	control := os.NewFile(3, "control")
	syscall.CloseOnExec(3) // not the worker's
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "funchost: cannot keep the worker's processes together (prctl: %v); they may outlive the host\n", errno)
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
		fmt.Fprintf(os.Stderr, "funchost: starting the worker %s: %v\n", args[0], err)
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
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
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
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return 0, false, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0] == "Z" || fields[0] == "X", err == nil
}
