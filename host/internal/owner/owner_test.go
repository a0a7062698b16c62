package owner

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddressDropsThePort(t *testing.T) {
	assert.Equal(t, Address("10.0.0.1:1"), Address("10.0.0.1:2"))
	assert.Equal(t, ID("addr:::1"), Address("[::1]:80"))
}

func TestCounterBoundsEachOwnerAndAll(t *testing.T) {
	c := NewCounter("running tasks", "FUNCMCP_X", Limit{PerOwner: 2, Global: 3})
	r1, err := c.Take("a", 1)
	require.NoError(t, err)
	_, err = c.Take("a", 1)
	require.NoError(t, err)

	_, err = c.Take("a", 1)
	var le *LimitError
	require.True(t, errors.As(err, &le))
	assert.False(t, le.Global)
	assert.Equal(t, "too many running tasks for this client (the limit is 2); FUNCMCP_X changes it", err.Error())

	_, err = c.Take("b", 1)
	require.NoError(t, err)
	_, err = c.Take("c", 1)
	require.True(t, errors.As(err, &le))
	assert.True(t, le.Global)
	assert.Equal(t, "too many running tasks on this server (the limit is 3)", err.Error())

	r1()
	r1() // a second release gives nothing back twice
	assert.Equal(t, int64(1), c.Held("a"))
	assert.Equal(t, int64(2), c.Total())
	_, err = c.Take("c", 1)
	assert.NoError(t, err)
	assert.Equal(t, 3, c.Owners())
}

func TestCounterForgetsOwnersThatHoldNothing(t *testing.T) {
	c := NewCounter("bytes", "", Limit{})
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := c.Take(ID("o"+strconv.Itoa(i%8)), 100)
			if err == nil {
				release()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 0, c.Owners())
	assert.Equal(t, int64(0), c.Total())
}
