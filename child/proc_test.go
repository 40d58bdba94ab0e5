//go:build linux

package child

import (
	"os"
	"os/exec"
	"testing"
)

// TestHasChildren: hasChildren says whether the process has a child, a
// zombie included, without reaping it. It runs in a helper process of its
// own, whose only children are the helper's.
func TestHasChildren(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(exe)
	c.Env = append(os.Environ(), "CHILD_TEST_HELPER=haschildren")
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "false\ntrue\ntrue\nfalse\n"; got != want {
		t.Fatalf("none, running, zombie, reaped: got %q, want %q", got, want)
	}
}
