//go:build linux

package test

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// Issue 33: a session's in and out are followed when they are replaced,
// as DIR's own FIFOs and a session's ask are, by the events of the
// session's directory (no timer). A FIFO put in place of in is served,
// and the status file names it as the session's input; one put in place
// of out gets the output that waited in the old one; an in removed is
// made again (-create) after a second and served. Close then removes
// the FIFOs made again too, and the agent's descriptors are back where
// they were. Before, a session's in and out were not followed: a writer
// of the new in found no reader.
func TestSessionsFIFOsFollowed(t *testing.T) {
	checkLeaks(t, true)
	a := startSessions(t, []string{"-stderr", "out"}, []string{"/bin/cat"})
	a.mustOpen("warm", nil) // takes the cgroup made at start, which no later open makes ahead
	if f := a.closeSession("warm"); f.typ() != "closed" {
		t.Fatalf("close warm: %v", f)
	}
	base := settledFDs(t, a)
	a.mustOpen("s1", nil)
	in, out := a.sessionFile("s1", "in"), a.sessionFile("s1", "out")
	r := openReader(t, out)
	say := func(line string) {
		t.Helper()
		w := openWriter(t, in) // waits while in has no reader: until the agent serves it
		w.writeLine(line)
		w.close()
	}
	say("before")
	r.expectLine("before")

	replace(t, in)
	say("in replaced")
	r.expectLine("in replaced")
	var st syscall.Stat_t
	if err := syscall.Stat(in, &st); err != nil {
		t.Fatal(err)
	}
	if !eventually(hangTimeout, func() bool { return a.sessionInput("s1") == st.Ino }) {
		t.Errorf("the status file names inode %d as s1's in, the FIFO there is %d", a.sessionInput("s1"), st.Ino)
	}

	r.close()
	say("waiting")
	waitFIFOHolds(t, out, len("waiting\n"))
	replace(t, out)
	r = openReader(t, out)
	r.expectLine("waiting")

	if err := os.Remove(in); err != nil {
		t.Fatal(err)
	}
	say("in made again")
	r.expectLine("in made again")
	r.close()

	if f := a.closeSession("s1"); f.typ() != "closed" {
		t.Fatalf("close s1: %v", f)
	}
	if left := a.sessionNames(); len(left) > 0 {
		t.Errorf("left in DIR/sessions: %v", left)
	}
	if !strings.Contains(a.stderr(), "fifo replaced; serving the new one") {
		t.Errorf("the agent's log does not say it serves a new fifo:\n%s", a.stderr())
	}
	var fds int
	if !eventually(hangTimeout, func() bool { fds = settledFDs(t, a); return fds == base }) {
		t.Errorf("the agent has %d descriptors after the session closed, %d before it opened", fds, base)
	}
	a.requireRunning()
}

// replace puts a new FIFO of the test's at path, as someone who replaces
// it would: made next to it and renamed over it.
func replace(t *testing.T, path string) {
	t.Helper()
	tmp := path + ".new"
	if err := syscall.Mkfifo(tmp, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// sessionInput is the inode the status file names as the input FIFO of
// session name, 0 when it names none.
func (a *agent) sessionInput(name string) uint64 {
	a.t.Helper()
	for _, s := range a.statusSessions() {
		if s["name"] != name {
			continue
		}
		inputs, _ := s["inputs"].(map[string]any)
		in, _ := inputs["in"].(map[string]any)
		ino, _ := in["ino"].(float64)
		return uint64(ino)
	}
	return 0
}
