//go:build linux

// Package testgate is for tests: the one rule for a test that cannot run
// here. It skips, saying why, unless FIFOBRIDGE_REQUIRE_PRIVILEGED=1 (as CI
// sets it), where a test that does not run fails instead: under the gate,
// passing by not running is not possible.
package testgate

import (
	"fmt"
	"os"
	"testing"
)

// Env is the variable that turns the gate on when it is "1".
const Env = "FIFOBRIDGE_REQUIRE_PRIVILEGED"

// On reports whether the gate is on.
func On() bool { return os.Getenv(Env) == "1" }

// Skip skips t with the reason format and args give, or fails it with
// that reason when the gate is on.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if On() {
		t.Fatalf("%s (a skip is a failure with %s=1)", why, Env)
	}
	t.Skip(why)
}
