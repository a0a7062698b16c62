package dedup

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWindowForgetsTheOldest(t *testing.T) {
	w := NewWindow(2)
	assert.True(t, w.Add("x"))
	assert.False(t, w.Add("x"))
	assert.True(t, w.Add("y"))
	assert.True(t, w.Add("z")) // x forgotten
	assert.True(t, w.Add("x"))
	assert.False(t, w.Add("z"))
	assert.True(t, w.Contains("z"))
	assert.False(t, w.Contains("y"), "forgotten")
	assert.False(t, w.Contains("q"), "never added")
	assert.True(t, w.Add("q"), "Contains does not add")
}

func ExampleWindow() {
	w := NewWindow(100)
	for _, id := range []string{"a", "b", "a"} {
		if w.Add(id) {
			fmt.Println("deliver", id)
		} else {
			fmt.Println("drop", id)
		}
	}
	// Output:
	// deliver a
	// deliver b
	// drop a
}
