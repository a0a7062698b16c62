//go:build !linux

package supervise

import (
	"os"
	"os/exec"
)

// reaped leaves cmd as it is: outside Linux there is no child subreaper.
// The worker runs in its own process group (on Unix), which the host stops
// as a whole; a process that leaves the group, or the whole group when the
// host itself is killed, may outlive the host.
func reaped(*exec.Cmd) (control *os.File, started func(), err error) {
	return nil, func() {}, nil
}
