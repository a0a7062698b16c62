// Package inittrace measures what a package's initialisation costs, for
// tests: it runs the test binary again with GODEBUG=inittrace=1 and no test
// selected, and reads the runtime's line for the package. The allocation
// count is deterministic (the clock is not), so a test can hold a package
// to an allocation bound at init: what it builds there, every program that
// links it pays before main, funchost and every worker alike.
package inittrace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cost is one package's line of the runtime's init trace.
type Cost struct {
	Bytes  int64 // allocated by the package's init
	Allocs int64 // heap allocations of the package's init
}

// Of returns the init cost of the package with import path pkg in the
// running test binary: zero when the package has no init work (the runtime
// then prints no line for it). The package's own test files are compiled
// into it, so their package-level variables count too.
func Of(tb testing.TB, pkg string) Cost {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$", "-test.bench=^$")
	godebug := "inittrace=1"
	if v := os.Getenv("GODEBUG"); v != "" {
		godebug = v + "," + godebug
	}
	cmd.Env = append(os.Environ(), "GODEBUG="+godebug)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("running the test binary with the init trace: %v\n%s", err, stderr.String())
	}
	cost, err := parse(stderr.Bytes(), pkg)
	if err != nil {
		tb.Fatal(err)
	}
	return cost
}

// parse reads pkg's line from an init trace:
//
//	init github.com/x/y @2.1 ms, 0.5 ms clock, 225288 bytes, 3298 allocs
func parse(trace []byte, pkg string) (Cost, error) {
	sc := bufio.NewScanner(bytes.NewReader(trace))
	prefix := "init " + pkg + " @"
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		f := strings.Fields(line)
		// @t ms, c ms clock, B bytes, N allocs → f[len-4]="B", f[len-2]="N"
		if len(f) < 4 || f[len(f)-1] != "allocs" || f[len(f)-3] != "bytes," {
			return Cost{}, fmt.Errorf("reading the init trace of %s: unexpected line %q", pkg, sc.Text())
		}
		b, err1 := strconv.ParseInt(f[len(f)-4], 10, 64)
		n, err2 := strconv.ParseInt(f[len(f)-2], 10, 64)
		if err1 != nil || err2 != nil {
			return Cost{}, fmt.Errorf("reading the init trace of %s: unexpected line %q", pkg, sc.Text())
		}
		return Cost{Bytes: b, Allocs: n}, nil
	}
	return Cost{}, nil
}
