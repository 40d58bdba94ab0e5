//go:build linux

package test

import (
	"os"
	"strconv"
	"testing"
)

// The README's test command runs with -short and takes a few minutes on
// two cores; CI also runs the suite without it. Tests that prove a property
// by repeating it many times or at size (200 containers, fork storms and
// bombs, twenty-trial loops, a thousand terminal restarts, 10,000 exec
// requests, 64 MiB byte-exact transfers) run in full only without -short.
// With -short each still runs, a few times or at a smaller size, so that
// every path is reached.

// soak returns long, or short when the tests run with -short. When the
// environment variable env (if not "") holds a positive number, that wins:
// FIFOBRIDGE_STORM_RUNS=200 soaks one test longer than CI does.
func soak(env string, short, long int) int {
	if env != "" {
		if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
			return n
		}
	}
	if testing.Short() {
		return short
	}
	return long
}
