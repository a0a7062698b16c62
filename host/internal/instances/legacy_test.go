package instances

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/backplane"
)

// testSessionKey is a session key of 64 hex digits.
const testSessionKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// countingBackplane counts the messages it is asked to send; each is
// taken.
type countingBackplane struct{ sends atomic.Int32 }

func (c *countingBackplane) Start(context.Context, backplane.Deliver) error { return nil }
func (c *countingBackplane) Stop(context.Context) error                     { return nil }
func (c *countingBackplane) Send(context.Context, string, backplane.Message) (backplane.Outcome, error) {
	c.sends.Add(1)
	return backplane.Taken, nil
}

// TestForwardResponseOnlyAnswersARequest: a client's response goes to
// another instance (a storage request there) only when it answers a
// request that instance sent to that client, once; a response with a
// made-up id, an id of another client, or one already forwarded, is
// refused here at no storage cost.
func TestForwardResponseOnlyAnswersARequest(t *testing.T) {
	key, err := auth.ParseKey(testSessionKey)
	require.NoError(t, err)
	sealer, err := auth.NewSealer(key)
	require.NoError(t, err)
	bp := &countingBackplane{}
	// a is the instance whose call asks; b receives the client's answer.
	a := &Legacy{instanceID: "instanceaaaaaaaa", bp: bp, sealer: sealer, log: slog.New(slog.DiscardHandler)}
	b := &Legacy{instanceID: "instancebbbbbbbb", bp: bp, sealer: sealer, log: slog.New(slog.DiscardHandler)}
	b.init()
	a.init()
	ctx := t.Context()
	answer := func(id string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{"action":"accept"}}`)
	}

	for _, id := range []string{
		"instanceaaaaaaaa~abcdefghij0123456789",       // the old format: anyone can make it
		"nosuchinstance~abcdefghij0123456789",         // an instance that never asked
		"instanceaaaaaaaa~" + strings.Repeat("A", 50), // not sealed
		"../../etc~x",
	} {
		assert.NoError(t, b.ForwardResponse(ctx, strings.SplitN(id, "~", 2)[0], "scope1", answer(id)), id)
	}
	assert.Zero(t, bp.sends.Load(), "a made-up id costs no storage request")

	id := a.RequestID("scope1", time.Now().Add(time.Minute))
	require.True(t, strings.HasPrefix(id, "instanceaaaaaaaa~"), id)
	assert.NoError(t, b.ForwardResponse(ctx, "instanceaaaaaaaa", "scope2", answer(id)), "another client's request")
	assert.Zero(t, bp.sends.Load())
	assert.NoError(t, b.ForwardResponse(ctx, "instanceaaaaaaaa", "scope1", answer(id)))
	assert.EqualValues(t, 1, bp.sends.Load(), "the answer to a request goes")
	assert.NoError(t, b.ForwardResponse(ctx, "instanceaaaaaaaa", "scope1", answer(id)), "the same answer again")
	assert.EqualValues(t, 1, bp.sends.Load())

	expired := a.RequestID("scope1", time.Now().Add(-time.Second))
	assert.NoError(t, b.ForwardResponse(ctx, "instanceaaaaaaaa", "scope1", answer(expired)), "a request no longer waiting")
	assert.EqualValues(t, 1, bp.sends.Load())
}
