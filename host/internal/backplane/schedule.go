package backplane

import (
	"sync"
	"time"
)

// pollSchedule decides how long a queue receiver waits before its next
// poll, so that polls follow the traffic: after a message, the next poll
// comes a little before the next message is due (the mean gap between
// messages seen lately); after a message sent, a little before its outcome
// is due (the mean time outcomes took lately). From then on, each empty
// poll doubles the pause, from first up to most. Storage requests thus
// grow with the messages, not with the time a queue has been busy. It is
// safe for concurrent use.
type pollSchedule struct {
	first, most time.Duration

	mu       sync.Mutex
	pause    time.Duration // the next pause
	doubling time.Duration // the pause after the next empty poll
	gap      ewma          // between two polls that brought messages
	outcome  ewma          // from a message sent to its outcome
	lastHit  time.Time
}

// ahead is the share of a predicted wait the receiver waits: it polls a
// little early rather than a little late.
const ahead = 0.7

func newPollSchedule(first, most time.Duration) *pollSchedule {
	return &pollSchedule{first: first, most: most, pause: first, doubling: first}
}

// received: a poll brought messages.
func (s *pollSchedule) received(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.lastHit.IsZero() {
		s.gap.add(now.Sub(s.lastHit))
	}
	s.lastHit = now
	s.pause, s.doubling = s.predicted(s.gap), s.first
}

// sent: this instance sent a message; its outcome will come.
func (s *pollSchedule) sent() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pause, s.doubling = s.predicted(s.outcome), s.first
}

// answered: an outcome came took after its message was sent.
func (s *pollSchedule) answered(took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcome.add(took)
}

// empty: a poll brought nothing. It returns the pause before the next.
func (s *pollSchedule) empty() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pause
	s.pause, s.doubling = s.doubling, min(2*s.doubling, s.most)
	return p
}

// next returns the pause before the next poll after one that brought
// messages.
func (s *pollSchedule) next() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pause
	s.pause = s.doubling
	return p
}

func (s *pollSchedule) predicted(e ewma) time.Duration {
	if !e.ok {
		return s.first
	}
	return min(max(s.first, time.Duration(ahead*float64(e.mean))), s.most)
}

// ewma is an exponentially weighted moving mean of durations.
type ewma struct {
	mean time.Duration
	ok   bool
}

func (e *ewma) add(d time.Duration) {
	if !e.ok {
		e.mean, e.ok = d, true
		return
	}
	e.mean += (d - e.mean) / 4
}
