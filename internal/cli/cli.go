// Package cli holds what funchost's command and an app's serve command
// share: the logger their --log-format and --verbose flags ask for, the
// buffer their log is written through, and the comma-separated lists of
// --allowed-hosts and --allowed-origins.
package cli

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Logger returns the logger writing to w in format ("text" or "json"), at
// debug level when verbose, else info.
func Logger(w io.Writer, format string, verbose bool) (*slog.Logger, error) {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q is not text or json", format)
}

// SplitList splits a comma-separated flag value, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
