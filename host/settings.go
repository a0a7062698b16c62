package host

import "github.com/funcmcp/funcmcp/host/internal/announce"

// The rate of the changes the app announces (see Options.MaxChangesPerSecond).
const (
	// DefaultMaxChangesPerSecond is how many changes per second the
	// worker's announcements reach the clients when
	// Options.MaxChangesPerSecond is 0 (burst: as many at once).
	DefaultMaxChangesPerSecond = announce.DefaultMaxChangesPerSecond
	// MaxPendingChanges bounds the distinct resources whose changes wait
	// for their turn past the rate: ten seconds of the rate, at most this
	// many. Past it, they are announced as one change of the resources
	// list.
	MaxPendingChanges = announce.MaxPendingChanges
)
