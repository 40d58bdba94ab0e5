//go:build linux

package test

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// This file talks sessions mode's raw wire: a reply FIFO in DIR/replies,
// a control line into DIR/in, and the one frame that answers it; asks
// are written to a session's own DIR/sessions/NAME/ask.

// startSessions starts an agent in sessions mode and waits until it
// serves.
func startSessions(t *testing.T, flags []string, program []string) *agent {
	t.Helper()
	a := startAgent(t, agentConfig{flags: append([]string{"-mode", "sessions"}, flags...), program: program})
	a.waitStatus("sessions mode serving", func(st status) bool { return st.Mode == "sessions" && st.State == "running" })
	return a
}

// wireFrame is one frame of an answer, decoded loosely.
type wireFrame map[string]any

func (f wireFrame) typ() string { s, _ := f["type"].(string); return s }

func (f wireFrame) num(k string) int { n, _ := f[k].(float64); return int(n) }

// wireReply makes a reply FIFO in DIR/replies and opens it for reading
// (and writing, so that it never reads EOF); done closes and removes it.
func (a *agent) wireReply() (name string, r *bufio.Reader, done func()) {
	a.t.Helper()
	b := make([]byte, 16)
	rand.Read(b)
	name = hex.EncodeToString(b)
	path := filepath.Join(a.dir, "replies", name)
	if err := unix.Mkfifo(path, 0o600); err != nil {
		a.t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		a.t.Fatal(err)
	}
	f.SetReadDeadline(time.Now().Add(3 * hangTimeout))
	return name, bufio.NewReader(f), func() { f.Close(); os.Remove(path) }
}

// writeLine writes one JSON line to the FIFO at path without waiting for
// a reader.
func (a *agent) writeLine(path string, v map[string]any) {
	a.t.Helper()
	a.writeWire(path, append(a.marshal(v), '\n'))
}

// writeSealed writes v to the FIFO at path as a sealed line, whatever its
// length (sealLine: whole pieces of 4096 bytes), without waiting for a
// reader.
func (a *agent) writeSealed(path string, v map[string]any) {
	a.t.Helper()
	a.writeWire(path, sealLine(a.marshal(v)))
}

func (a *agent) marshal(v map[string]any) []byte {
	a.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
	}
	return b
}

// writeWire writes b to the FIFO at path with one write(2), without
// waiting for a reader.
func (a *agent) writeWire(path string, b []byte) {
	a.t.Helper()
	w, err := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		a.t.Fatalf("open %s: %v", path, err)
	}
	defer w.Close()
	if _, err := w.Write(b); err != nil {
		a.t.Fatalf("write %s: %v", path, err)
	}
}

// readWireFrame reads one frame.
func (a *agent) readWireFrame(r *bufio.Reader) wireFrame {
	a.t.Helper()
	line, err := r.ReadBytes('\n')
	if err != nil {
		a.t.Fatalf("read a frame: %v; agent's stderr:\n%s", err, a.stderr())
	}
	var f wireFrame
	if err := json.Unmarshal(line, &f); err != nil {
		a.t.Fatalf("frame %q: %v", line, err)
	}
	return f
}

// control sends the control line c and returns its answer.
func (a *agent) control(c map[string]any) wireFrame {
	a.t.Helper()
	name, r, done := a.wireReply()
	defer done()
	c["reply"] = name
	a.writeLine(a.in, c)
	return a.readWireFrame(r)
}

// openSession opens session name with the open line's fields more.
func (a *agent) openSession(name string, more map[string]any) wireFrame {
	a.t.Helper()
	c := map[string]any{"op": "open", "session": name}
	for k, v := range more {
		c[k] = v
	}
	return a.control(c)
}

// mustOpen opens session name and fails unless it opened.
func (a *agent) mustOpen(name string, more map[string]any) int {
	a.t.Helper()
	f := a.openSession(name, more)
	if f.typ() != "opened" || f.num("pid") <= 0 {
		a.t.Fatalf("open %s: %v; agent's stderr:\n%s", name, f, a.stderr())
	}
	return f.num("pid")
}

// closeSession closes session name and returns the answer.
func (a *agent) closeSession(name string) wireFrame {
	a.t.Helper()
	return a.control(map[string]any{"op": "close", "session": name})
}

// askSession asks session name input on its ask FIFO and returns the
// answer's text and its last frame.
func (a *agent) askSession(name, input string) (string, wireFrame) {
	a.t.Helper()
	reply, r, done := a.wireReply()
	defer done()
	a.writeLine(a.sessionFile(name, "ask"), map[string]any{"id": "a1", "reply": reply, "input": input, "timeout": "20s"})
	return a.readAnswer(r)
}

// readAnswer reads a turn's frames: the answer's text and the last frame.
func (a *agent) readAnswer(r *bufio.Reader) (string, wireFrame) {
	a.t.Helper()
	var text strings.Builder
	for {
		f := a.readWireFrame(r)
		if f.typ() != "answer" {
			return text.String(), f
		}
		s, _ := f["data"].(string)
		text.WriteString(s)
	}
}

// mustAsk asks and fails unless the turn ended at the prompt.
func (a *agent) mustAsk(name, input string) string {
	a.t.Helper()
	out, end := a.askSession(name, input)
	if end.typ() != "end" {
		a.t.Fatalf("ask %s %q: %v (answer %q)", name, input, end, out)
	}
	return out
}

// sessionFile is a session's file.
func (a *agent) sessionFile(name, file string) string {
	return filepath.Join(a.dir, "sessions", name, file)
}

// sessionNames lists DIR/sessions.
func (a *agent) sessionNames() []string {
	a.t.Helper()
	ents, err := os.ReadDir(filepath.Join(a.dir, "sessions"))
	if err != nil {
		a.t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// listed is the answer of a list: the sessions' names, in order.
func listed(f wireFrame) []string {
	var names []string
	ss, _ := f["sessions"].([]any)
	for _, s := range ss {
		m, _ := s.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
	}
	return names
}

// statusSessions reads the status file's "sessions", raw.
func (a *agent) statusSessions() []map[string]any {
	a.t.Helper()
	b, err := os.ReadFile(a.status)
	if err != nil {
		a.t.Fatal(err)
	}
	var st struct {
		Sessions []map[string]any `json:"sessions"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		a.t.Fatalf("status %q: %v", b, err)
	}
	return st.Sessions
}
