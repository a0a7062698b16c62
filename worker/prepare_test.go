package worker

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrepareServesOneBuild: the functions and the handler of a Prepared
// app come from the build Prepare made, not from builds of their own.
func TestPrepareServesOneBuild(t *testing.T) {
	a, _ := testApp(t, io.Discard)
	p, err := a.Prepare()
	require.NoError(t, err)
	// A tool added after Prepare belongs to no build of p.
	a.ConfigureMcpTool("late").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		return TextResult("late"), nil
	})
	var names []string
	for _, f := range p.Functions() {
		names = append(names, f.Name)
	}
	require.Contains(t, names, "echo")
	require.NotContains(t, names, "late")
	all, err := a.Functions()
	require.NoError(t, err)
	require.Len(t, all, len(names)+1, "App.Functions builds afresh")

	h := p.Handler()
	post := func(fn string) int {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/"+fn, strings.NewReader(body(t, `{"name":"`+fn+`","arguments":{"message":"hi"}}`, 1)))
		h.ServeHTTP(w, r)
		return w.Code
	}
	require.Equal(t, http.StatusOK, post("echo"))
	require.Equal(t, http.StatusNotFound, post("late"))
}

// TestPrepareReportsEveryProblem: Prepare fails as Build does.
func TestPrepareReportsEveryProblem(t *testing.T) {
	a := New(&Options{Stderr: io.Discard, Stdout: io.Discard})
	a.ConfigureMcpTool("no_handler")
	_, err := a.Prepare()
	require.ErrorIs(t, err, ErrNoHandler)
	require.EqualError(t, err, a.Build().Error())
}
