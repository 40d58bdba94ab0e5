//go:build linux

package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// controlLine writes the control line c into stream mode's DIR/control
// and returns its answer.
func (a *agent) controlLine(c map[string]any) wireFrame {
	a.t.Helper()
	name, r, done := a.wireReply()
	defer done()
	c["reply"] = name
	a.writeLine(filepath.Join(a.dir, "control"), c)
	return a.readWireFrame(r)
}

// controlStatus is what the status file says of the control FIFO.
type controlStatus struct {
	Control string                     `json:"control"`
	Inputs  map[string]json.RawMessage `json:"inputs"`
}

func (a *agent) controlStatus() controlStatus {
	a.t.Helper()
	var st controlStatus
	b, err := os.ReadFile(a.status)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		a.t.Fatalf("status: %v", err)
	}
	return st
}

// Stream mode's control FIFO, with and without a prompt: DIR/control is
// an input FIFO (0620 for -perm 0660) that the status file names; it
// takes signal (and eof) naming no session, and answers a line that
// names a session, or another op, with one error frame; it is removed at
// exit.
func TestControlFIFO(t *testing.T) {
	for _, flags := range [][]string{nil, {"-prompt", `^> $`}} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) {
			checkLeaks(t, true)
			a := startAgent(t, agentConfig{flags: flags, program: binSh(`trap 'echo caught' USR1; printf '> '; while :; do sleep 1; done`)})
			a.waitStatus("a running child", func(st status) bool { return st.State == "running" && st.Child.PID > 0 })
			path := filepath.Join(a.dir, "control")
			fi, err := os.Lstat(path)
			if err != nil || fi.Mode()&os.ModeNamedPipe == 0 || fi.Mode().Perm() != 0o620 {
				t.Fatalf("DIR/control: %v, %v; want a FIFO of mode 0620", fi, err)
			}
			if st := a.controlStatus(); st.Control != path || st.Inputs["control"] == nil {
				t.Errorf("the status file names %q as the control FIFO, inputs %v; want %q and inputs.control", st.Control, st.Inputs, path)
			}
			for _, c := range []map[string]any{
				{"op": "signal", "signal": "USR1", "session": "s1"},
				{"op": "eof", "session": "s1"},
				{"op": "list"},
				{"op": "close", "all": true},
				{"op": "open", "session": "s1"},
				{"op": "signal"},
			} {
				if f := a.controlLine(c); f.typ() != "error" {
					t.Errorf("line %v on DIR/control: %v, want one error frame", c, f)
				}
			}
			if f := a.controlLine(map[string]any{"id": "s", "op": "signal", "signal": "USR1"}); f.typ() != "signaled" || f["id"] != "s" {
				t.Errorf("signal line on DIR/control: %v", f)
			}
			a.requireRunning()
			a.stop()
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Errorf("DIR/control is still there after the agent stopped: %v", err)
			}
		})
	}
}

// A symbolic link at DIR/control is never followed: at start the agent
// refuses it (125, one line naming it) and leaves it and its target
// alone; one renamed over the FIFO while the agent runs is left alone too
// (signal refuses it, 125), and the agent keeps serving; once it is gone
// the agent makes the FIFO again and signal works.
func TestControlFIFOSymlink(t *testing.T) {
	t.Run("at start", func(t *testing.T) {
		checkLeaks(t, true)
		dir := t.TempDir()
		target := filepath.Join(t.TempDir(), "target")
		if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
		id := fileID(t, target)
		link := filepath.Join(dir, "control")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		a := startAgent(t, agentConfig{dir: dir, program: []string{"sleep", "300"}})
		if code := a.wait(hangTimeout); code != 125 {
			t.Errorf("agent exit code %d, want 125", code)
		}
		requireOneLine(t, "the agent", a.stderr())
		if !strings.Contains(a.stderr(), "control") {
			t.Errorf("the agent's line does not name the control FIFO: %s", a.stderr())
		}
		requireSymlinkRefused(t, link, target, id)
	})
	t.Run("while serving", func(t *testing.T) {
		checkLeaks(t, true)
		a := startAgent(t, agentConfig{program: binSh(`trap 'echo caught' USR1; while :; do sleep 1; done`)})
		a.waitStatus("a running child", func(st status) bool { return st.State == "running" && st.Child.PID > 0 })
		out := openReader(t, a.out)
		target := filepath.Join(t.TempDir(), "target")
		if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
		id := fileID(t, target)
		path := filepath.Join(a.dir, "control")
		tmp := filepath.Join(a.dir, ".link")
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		a.host("signal", "USR1").requireCode(t, "signal through a link", 125, "control")
		requireSymlinkRefused(t, path, target, id)
		a.requireRunning()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if !eventually(hangTimeout, func() bool {
			fi, err := os.Lstat(path)
			return err == nil && fi.Mode()&os.ModeNamedPipe != 0
		}) {
			t.Fatal("the agent did not make DIR/control again")
		}
		a.host("signal", "USR1").requireCode(t, "signal once DIR/control is back", 0, "")
		if got := out.readLine(); got != "caught" {
			t.Errorf("the child said %q, want caught", got)
		}
		if got := fileID(t, target); got != id {
			t.Errorf("the link's target changed: %s, was %s", got, id)
		}
	})
}

// With -create=false the agent does not make DIR/control: signal says
// there is none (125), and once someone makes it, the agent serves it
// (followed) and leaves it at exit.
func TestControlFIFOCreateFalse(t *testing.T) {
	checkLeaks(t, true)
	dir := t.TempDir()
	for _, name := range []string{"in", "out"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a := startAgent(t, agentConfig{dir: dir, flags: []string{"-create=false"},
		program: binSh(`trap 'echo caught' USR1; while :; do sleep 1; done`)})
	a.waitStatus("a running child", func(st status) bool { return st.State == "running" && st.Child.PID > 0 })
	out := openReader(t, a.out)
	path := filepath.Join(dir, "control")
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("the agent made DIR/control with -create=false: %v", err)
	}
	a.host("signal", "USR1").requireCode(t, "signal without DIR/control", 125, "control")
	if err := syscall.Mkfifo(path, 0o620); err != nil {
		t.Fatal(err)
	}
	if !eventually(hangTimeout, func() bool { return a.controlStatus().Inputs["control"] != nil }) {
		t.Fatal("the agent never served the DIR/control made after its start")
	}
	a.host("signal", "USR1").requireCode(t, "signal through the DIR/control made later", 0, "")
	if got := out.readLine(); got != "caught" {
		t.Errorf("the child said %q, want caught", got)
	}
	a.stop()
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the DIR/control the agent did not make is gone after it stopped: %v", err)
	}
}
