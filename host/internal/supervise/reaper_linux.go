package supervise

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/funcmcp/funcmcp/host/internal/reaper"
)

// On Linux the worker runs under the reaper (package reaper): the host's own
// executable started again in reaper mode, which starts the worker.

// reaped wraps cmd (already set up for the worker) so that it starts the
// reaper, which starts the worker. It returns the write end of the control
// pipe, which the host keeps open while the worker should live, and a
// function to call once cmd has started (or failed to).
func reaped(cmd *exec.Cmd) (control *os.File, started func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("creating the worker's control pipe: %w", err)
	}
	cmd.Args = append([]string{reaper.Arg0, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/proc/self/exe" // this executable, even if its file was replaced
	cmd.ExtraFiles = []*os.File{r}
	return w, func() { _ = r.Close() }, nil
}
