package main

import (
	"slices"
	"testing"
)

func TestList(t *testing.T) {
	var l list
	if got, want := l.add("water the plants"), (Added{ID: 1, Text: "water the plants", Open: 1}); got != want {
		t.Errorf("first add = %+v, want %+v", got, want)
	}
	if got, want := l.add("call Ana"), (Added{ID: 2, Text: "call Ana", Open: 2}); got != want {
		t.Errorf("second add = %+v, want %+v", got, want)
	}
	if got, err := l.json(); err != nil || got != `[{"id":1,"text":"water the plants"},{"id":2,"text":"call Ana"}]` {
		t.Errorf("json = %s, %v", got, err)
	}
	if n := l.clear(); n != 2 {
		t.Errorf("clear = %d, want 2", n)
	}
	if got, want := l.add("again"), (Added{ID: 3, Text: "again", Open: 1}); got != want {
		t.Errorf("add after clear = %+v, want %+v", got, want)
	}
}

// TestApp checks the configuration with the rules emit-metadata and
// funchost apply, and that both tools are among the functions.
func TestApp(t *testing.T) {
	fns, err := newApp(&list{}).Functions()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fn := range fns {
		names = append(names, fn.Name)
	}
	for _, want := range []string{"add_todo", "clear_todos"} {
		if !slices.Contains(names, want) {
			t.Errorf("the app has no function %s (it has %v)", want, names)
		}
	}
}
