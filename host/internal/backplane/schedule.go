package backplane

import (
	"sync"
	"time"
)

// pollSchedule decides how long a queue receiver waits before its next
// poll, so that polls follow the traffic. After a poll that brought
// messages the pause starts again from first; after a message sent, from
// twice the time the send's request took (its outcome cannot come
// sooner). Each empty poll then doubles the pause, up to warmMost while an
// outcome is awaited or within window of the last message received (a
// client's next message is likely soon, and found within warmMost), and
// up to most after that. Storage requests thus
// grow with the messages (a few per message, a few dozen for one after a
// silence) rather than with the time a queue has been busy.
//
// No pause is derived from the pace of the messages themselves: a client
// that waits for each answer would slow the polls, and the polls it.
type pollSchedule struct {
	first, warmMost, most time.Duration
	window                time.Duration

	mu       sync.Mutex
	pause    time.Duration // the next pause
	doubling time.Duration // the pause after the next empty poll
	last     time.Time     // the last message received or sent
}

func newPollSchedule(first, warmMost, most, window time.Duration) *pollSchedule {
	return &pollSchedule{first: first, warmMost: warmMost, most: most, window: window, pause: first, doubling: first}
}

// received: a poll brought messages.
func (s *pollSchedule) received() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pause, s.doubling, s.last = s.first, s.first, time.Now()
}

// sent: this instance sent a message with a request that took took; its
// outcome will come.
func (s *pollSchedule) sent(took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pause, s.doubling = min(max(s.first, 2*took), s.warmMost), s.first
}

// next returns the pause before the next poll and moves on: the one after
// is twice as long, up to the bound of the moment: warmMost while an
// outcome is awaited, or within window of the last message received.
func (s *pollSchedule) next(awaiting bool) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	bound := s.most
	if awaiting || time.Since(s.last) < s.window {
		bound = s.warmMost
	}
	p := min(s.pause, bound)
	s.pause, s.doubling = min(s.doubling, bound), min(2*s.doubling, s.most)
	return p
}
