package sessions

import (
	"crypto/sha256"
	"sync"

	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// DefaultMaxLogSessions bounds how many sessions' logging/setLevel
// choices are remembered; the oldest choice is forgotten first.
const DefaultMaxLogSessions = 10000

// Levels remembers the logging/setLevel choice of up to max sessions,
// keyed by a hash of the session token; when full, the oldest choice is
// forgotten. It is the one piece of per-session state the endpoint keeps,
// local to this process.
type Levels struct {
	mu    sync.Mutex
	max   int
	rank  map[[sha256.Size]byte]int
	order [][sha256.Size]byte // insertion order, a ring of max entries
	next  int
}

// NewLevels returns the choices of up to max sessions
// (DefaultMaxLogSessions when max is not positive).
func NewLevels(max int) *Levels {
	if max <= 0 {
		max = DefaultMaxLogSessions
	}
	return &Levels{max: max, rank: make(map[[sha256.Size]byte]int)}
}

// Set records the level rank (metadata.LogLevelRank) session chose.
func (s *Levels) Set(session string, rank int) {
	key := sha256.Sum256([]byte(session))
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.rank[key]; !ok {
		if len(s.order) < s.max {
			s.order = append(s.order, key)
		} else {
			delete(s.rank, s.order[s.next])
			s.order[s.next] = key
			s.next = (s.next + 1) % s.max
		}
	}
	s.rank[key] = rank
}

// Get returns the session's level rank, -1 when it never set one.
func (s *Levels) Get(session string) int {
	key := sha256.Sum256([]byte(session))
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.rank[key]; ok {
		return r
	}
	return -1
}

// ParseLevel reads the params of logging/setLevel: the rank of its level,
// or the -32602 message when they are wrong. Names are matched exactly, as
// every member of a message is.
func ParseLevel(params []byte) (rank int, problem string) {
	if len(params) > 0 && params[0] != '{' && params[0] != 'n' {
		return -1, "Invalid params: params must be an object with a string 'level'."
	}
	raw := wire.Member(params, "level")
	if raw == nil || raw[0] == 'n' {
		return -1, "Invalid params: missing required parameter 'level'."
	}
	level, ok := wire.StringValue(raw)
	if !ok {
		return -1, "Invalid params: params must be an object with a string 'level'."
	}
	if rank = metadata.LogLevelRank(level); rank < 0 {
		return -1, "Invalid params: unknown log level '" + jsonx.SafeText(level) + "'."
	}
	return rank, ""
}
