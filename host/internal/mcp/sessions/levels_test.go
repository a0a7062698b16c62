package sessions

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLevelsForgetTheOldestSession(t *testing.T) {
	s := NewLevels(2)
	s.Set("a", 1)
	s.Set("b", 2)
	s.Set("a", 3) // an update keeps its place
	assert.Equal(t, 3, s.Get("a"))
	s.Set("c", 4) // full: "a", the oldest, goes
	assert.Equal(t, -1, s.Get("a"))
	assert.Equal(t, 2, s.Get("b"))
	assert.Equal(t, 4, s.Get("c"))
	assert.Equal(t, -1, s.Get("never"))
}
