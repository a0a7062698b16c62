package tasks

import (
	"context"
	"errors"
	"time"
)

// ErrNotClaimed is a claim that did not take the task: another instance
// claimed it first, its instance answered again, it ended, or it may not be
// run again.
var ErrNotClaimed = errors.New("the task was not claimed")

// Claim takes task id for instance, to run it again from the start: seen
// is the record as read when its instance was judged stopped. The claim is
// one conditional write (the store's Update: a row's ETag in Azure
// Storage, the lock of the memory store): it succeeds only when the record
// still shows what seen shows (the same instance, run and heartbeat) and
// the task may run again, so that of any number of instances claiming the
// same run exactly one gets it; the others get ErrNotClaimed. The claimed
// record is working again on instance, its run counted, its heartbeat now,
// its status message message, its pending input requests dropped (the new
// run asks again).
func Claim(ctx context.Context, s Store, id string, seen *Task, instance string, now time.Time, message string) (*Task, error) {
	return s.Update(ctx, id, func(t *Task) error {
		if !t.CanRunAgain() || t.Instance != seen.Instance || t.RunNumber() != seen.RunNumber() || !t.Heartbeat.Equal(seen.Heartbeat) {
			return ErrNotClaimed
		}
		t.Attempt, t.Instance, t.Status = t.RunNumber()+1, instance, StatusWorking
		t.Heartbeat, t.Updated, t.StatusMessage = now, now, message
		t.InputRequests, t.InputResponses = nil, nil
		return nil
	})
}
