package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTimeSpan reads a .NET TimeSpan as host.json writes functionTimeout:
// "[d.]hh:mm:ss[.fffffff]", or "-1" for no limit (returned as -1). The
// Functions host's minimum is one second.
func ParseTimeSpan(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "-1" {
		return -1, nil
	}
	bad := fmt.Errorf("%q is not a time span like \"00:05:00\" (or -1 for no limit)", s)
	var days int64
	rest := s
	if i := strings.IndexByte(rest, ':'); i > 0 {
		if j := strings.IndexByte(rest[:i], '.'); j >= 0 {
			d, err := strconv.ParseInt(rest[:j], 10, 32)
			if err != nil || d < 0 {
				return 0, bad
			}
			days, rest = d, rest[j+1:]
		}
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 {
		return 0, bad
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 32)
	m, err2 := strconv.ParseInt(parts[1], 10, 32)
	sec, err3 := strconv.ParseFloat(parts[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec >= 60 {
		return 0, bad
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec*float64(time.Second))
	if d < time.Second {
		return 0, fmt.Errorf("%q is shorter than the minimum of 1 second", s)
	}
	return d, nil
}
