//go:build linux

package test

import (
	"os"
	"strconv"
	"syscall"
	"testing"
)

// TestCwd: the agent's working directory is "/" while it serves, so that it
// pins no mount, its child starts in the directory the agent was started
// in, and relative -dir, -in, -out and -status keep working, replaced FIFOs
// included.
func TestCwd(t *testing.T) {
	// Not parallel: t.Chdir changes the working directory of the whole process.
	checkLeaks(t, true)
	requireBusybox(t)
	start := t.TempDir()
	t.Chdir(start)
	a := startAgent(t, agentConfig{
		dir:     "rel",
		flags:   []string{"-in", "fifos/in", "-out", "fifos/out", "-status", "st/status.json"},
		program: []string{busybox, "cat"},
	})
	a.in, a.out, a.status = "fifos/in", "fifos/out", "st/status.json"
	pid := a.waitChild()
	if cwd, err := os.Readlink("/proc/" + strconv.Itoa(a.pid) + "/cwd"); err != nil || cwd != "/" {
		t.Errorf("the agent's working directory is %q (%v), want /", cwd, err)
	}
	if cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); err != nil || cwd != start {
		t.Errorf("the child's working directory is %q (%v), want the agent's start directory %s", cwd, err, start)
	}
	r := openReader(t, a.out)
	roundTrip(t, a.in, r, "relative paths")
	for _, p := range []string{a.in, a.out} {
		if err := syscall.Mkfifo(p+".new", 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p+".new", p); err != nil {
			t.Fatal(err)
		}
	}
	r.close()
	r = openReader(t, a.out)
	roundTrip(t, a.in, r, "replaced fifos")
	if st, err := a.readStatus(); err != nil || st.Child.PID != pid {
		t.Errorf("status at the relative path: %+v, %v", st, err)
	}
	a.requireRunning()
	r.close()
	a.stop()
}
