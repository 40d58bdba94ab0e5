//go:build linux

package sessions

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/protocol"
)

// Two sessions with a prompt each answer their own asks; a cd in one does
// not move the other; a close ends one, removes its directory, and the
// other still answers.
func TestSessionsAskEachAndClose(t *testing.T) {
	h := startHarness(t, promptShell, nil)
	for _, name := range []string{"a", "b"} {
		f := h.open(name, map[string]any{"prompt": `^> $`})
		require.Equal(t, protocol.FrameOpened, f.typ(), "%v", f)
		require.NotZero(t, f.num("pid"))
	}
	_, end := h.ask("a", "cd /tmp")
	require.Equal(t, protocol.FrameEnd, end.typ(), "%v", end)
	out, _ := h.ask("a", "pwd")
	require.Equal(t, "/tmp\n", out)
	out, _ = h.ask("b", "pwd")
	require.NotEqual(t, "/tmp\n", out, "b did not move with a")

	list := h.do(map[string]any{"op": "list"})
	require.Equal(t, protocol.FrameSessions, list.typ())
	ss := list["sessions"].([]any)
	require.Len(t, ss, 2)
	first := ss[0].(map[string]any)
	require.Equal(t, "a", first["name"])
	inputs := first["inputs"].(map[string]any)
	require.Contains(t, inputs, "in")
	require.Contains(t, inputs, "ask")

	f := h.close("a")
	require.Equal(t, protocol.FrameClosed, f.typ(), "%v", f)
	h.noSessionDir("a")
	out, _ = h.ask("b", "echo still")
	require.Equal(t, "still\n", out)
	f = h.close("a")
	require.Equal(t, protocol.FrameError, f.typ(), "a second close: %v", f)
}

// An open whose PROGRAM cannot start answers 127 and keeps nothing; the
// name can be opened again.
func TestSessionsProgramCannotStart(t *testing.T) {
	h := startHarness(t, program{"/nonexistent/program"}, nil)
	f := h.open("x", nil)
	require.Equal(t, protocol.FrameError, f.typ(), "%v", f)
	require.Equal(t, 127, f.num("code"), "%v", f)
	require.Eventually(t, func() bool { return len(h.e.list()) == 0 }, 5*time.Second, 10*time.Millisecond)
	h.noSessionDir("x")
}

// Opens that are refused: open already, -max-sessions, reuse, bad names.
func TestSessionsOpenRefusals(t *testing.T) {
	h := startHarness(t, program{"/bin/cat"}, func(c *Config) { c.MaxSessions = 2 })
	first := h.open("one", nil)
	require.Equal(t, protocol.FrameOpened, first.typ(), "%v", first)
	f := h.open("one", nil)
	require.Equal(t, protocol.FrameError, f.typ())
	require.Contains(t, f["error"], "open already")
	f = h.open("one", map[string]any{"reuse": true})
	require.Equal(t, protocol.FrameOpened, f.typ(), "%v", f)
	require.Equal(t, true, f["reused"])
	require.Equal(t, first.num("pid"), f.num("pid"))
	require.Equal(t, protocol.FrameOpened, h.open("two", nil).typ())
	f = h.open("three", nil)
	require.Equal(t, protocol.FrameError, f.typ())
	require.Contains(t, f["error"], "-max-sessions")
	h.noSessionDir("three")
	for _, bad := range []string{"../x", ".hid", "a/b", strings.Repeat("n", 65), ""} {
		f := h.open(bad, nil)
		require.Equal(t, protocol.FrameError, f.typ(), "name %q", bad)
	}
	entries, err := os.ReadDir(filepath.Join(h.dir, "sessions"))
	require.NoError(t, err)
	require.Len(t, entries, 2, "nothing but the two sessions")
	_, err = os.Lstat(filepath.Join(h.dir, "x"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// An entry planted at DIR/sessions/NAME, a link or a file, is refused and
// left alone; a leftover directory of the agent's own user is reused.
func TestSessionsPlantedEntries(t *testing.T) {
	h := startHarness(t, program{"/bin/cat"}, nil)
	target := t.TempDir()
	link := filepath.Join(h.dir, "sessions", "link")
	require.NoError(t, os.Symlink(target, link))
	file := filepath.Join(h.dir, "sessions", "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	for _, name := range []string{"link", "file"} {
		f := h.open(name, nil)
		require.Equal(t, protocol.FrameError, f.typ(), "%s: %v", name, f)
	}
	got, err := os.Readlink(link)
	require.NoError(t, err)
	require.Equal(t, target, got, "the link is left alone")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "x", string(b))
	left, err := os.ReadDir(target)
	require.NoError(t, err)
	require.Empty(t, left, "nothing made where the link points")

	stale := filepath.Join(h.dir, "sessions", "stale")
	require.NoError(t, os.Mkdir(stale, 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(stale, "in"), 0o600))
	f := h.open("stale", nil)
	require.Equal(t, protocol.FrameOpened, f.typ(), "a leftover of the agent's user is reused: %v", f)
	require.Equal(t, protocol.FrameClosed, h.close("stale").typ())
	h.noSessionDir("stale")
}

// The agent's stop closes every session in parallel, those whose
// children ignore HUP and TERM too, within -stop-timeout + 1 s.
func TestSessionsStopClosesAll(t *testing.T) {
	stubborn := program{"/bin/sh", "-c", `trap '' HUP TERM; printf '> '; while :; do sleep 1; done`}
	h := startHarness(t, stubborn, nil)
	for i, name := range []string{"s1", "s2", "s3", "s4"} {
		more := map[string]any{"prompt": `^> $`}
		if i%2 == 0 {
			more["tty"] = true
		}
		f := h.open(name, more)
		require.Equal(t, protocol.FrameOpened, f.typ(), "%s: %v", name, f)
	}
	start := time.Now()
	h.stopWithin(h.e.cfg.StopTimeout + time.Second)
	require.Less(t, time.Since(start), h.e.cfg.StopTimeout+time.Second)
	entries, err := os.ReadDir(filepath.Join(h.dir, "sessions"))
	require.NoError(t, err)
	require.Empty(t, entries)
}

// A signal line reaches the session's foreground, on pipes and on a
// terminal; one for a session that is not open is refused.
func TestSessionsSignal(t *testing.T) {
	h := startHarness(t, promptShell, nil)
	for _, more := range []map[string]any{{"prompt": `^> $`}, {"prompt": `^> $`, "tty": true}} {
		name := "p"
		if more["tty"] != nil {
			name = "t"
		}
		require.Equal(t, protocol.FrameOpened, h.open(name, more).typ())
		// The trap writes a file, not to the session's output: the shell
		// runs it whenever the signal lands, which may be inside the
		// next turn.
		caught := filepath.Join(t.TempDir(), "caught")
		_, end := h.ask(name, `trap 'caught=1; echo caught > `+caught+`' USR1`)
		require.Equal(t, protocol.FrameEnd, end.typ(), "%v", end)
		f := h.do(map[string]any{"op": "signal", "session": name, "signal": "USR1"})
		require.Equal(t, protocol.FrameSignaled, f.typ(), "%v", f)
		out, _ := h.ask(name, "echo after")
		require.Contains(t, out, "after")
		require.Eventually(t, func() bool { _, err := os.Stat(caught); return err == nil }, 5*time.Second, 5*time.Millisecond,
			"the session's shell never ran its USR1 trap")
	}
	f := h.do(map[string]any{"op": "signal", "session": "none", "signal": "INT"})
	require.Equal(t, protocol.FrameError, f.typ())
	f = h.do(map[string]any{"op": "signal", "session": "p", "signal": "NOPE"})
	require.Equal(t, protocol.FrameError, f.typ())
}

// A session whose child ends for good closes itself.
func TestSessionsChildEndsClosesSession(t *testing.T) {
	h := startHarness(t, program{"/bin/sh", "-c", "exit 3"}, nil)
	f := h.open("brief", nil)
	require.Equal(t, protocol.FrameOpened, f.typ(), "%v", f)
	require.Eventually(t, func() bool { return len(h.e.list()) == 0 }, 10*time.Second, 10*time.Millisecond)
	h.noSessionDir("brief")
}

// -session-idle closes a session nobody uses; the others stay.
func TestSessionsIdle(t *testing.T) {
	h := startHarness(t, program{"/bin/cat"}, func(c *Config) { c.SessionIdle = 300 * time.Millisecond })
	require.Equal(t, protocol.FrameOpened, h.open("idle", nil).typ())
	require.Eventually(t, func() bool { return len(h.e.list()) == 0 }, 5*time.Second, 10*time.Millisecond)
	h.noSessionDir("idle")
}

// An open with a prompt that never comes answers timed_out after the
// line's timeout, and the session stays open.
func TestSessionsOpenTimesOut(t *testing.T) {
	h := startHarness(t, program{"/bin/cat"}, nil)
	f := h.open("quiet", map[string]any{"prompt": `^> $`, "timeout": "200ms"})
	require.Equal(t, protocol.FrameError, f.typ(), "%v", f)
	require.Equal(t, true, f["timed_out"])
	require.Len(t, h.e.list(), 1, "the session stays open")
	require.Equal(t, protocol.FrameClosed, h.close("quiet").typ())
}

// Opening and closing sessions, on pipes and on terminals, leaves
// nothing behind: descriptors and goroutines are back where they were.
func TestSessionsCycles(t *testing.T) {
	h := startHarness(t, promptShell, nil)
	cycle := func(i int) {
		more := map[string]any{"prompt": `^> $`}
		if i%2 == 1 {
			more["tty"] = true
		}
		f := h.open("c", more)
		require.Equal(t, protocol.FrameOpened, f.typ(), "cycle %d: %v", i, f)
		f = h.close("c")
		require.Equal(t, protocol.FrameClosed, f.typ(), "cycle %d: %v", i, f)
	}
	cycle(0)
	cycle(1)
	fds := leakcheck.FDs(t)
	for i := range 50 {
		cycle(i)
	}
	// The table closes its end of a reply FIFO after the frame the
	// harness read: wait for the last one. The count before may hold
	// the end of cycle 1's last reply still: nothing grows is at most
	// as many as then.
	require.Eventually(t, func() bool { return leakcheck.FDs(t) <= fds }, 5*time.Second, 5*time.Millisecond,
		"descriptors after 50 cycles: %d, %d before", leakcheck.FDs(t), fds)
	require.Empty(t, leakcheck.Children(t))
}

// A reply reader that takes nothing holds up neither the control loop
// nor other sessions: its open's answer is given up after the patience,
// and the session stays open. The patience is 5 s here (-stop-timeout
// 5s): an open held up by the stalled reader would take that long, one
// that was not takes far less, also on a busy machine.
func TestSessionsStalledReplyDoesNotBlock(t *testing.T) {
	h := startHarness(t, program{"/bin/cat"}, func(c *Config) { c.StopTimeout = 5 * time.Second })
	patience := h.e.rule.Patience()
	name, _, done := h.replyFIFO()
	defer done()
	path := filepath.Join(h.dir, "replies", name)
	w, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	for {
		if _, err := syscall.Write(w, make([]byte, 4096)); err != nil {
			break // full
		}
	}
	syscall.Close(w)
	h.write(`{"id":"o1","reply":"` + name + `","op":"open","session":"stalled"}` + "\n")
	start := time.Now()
	f := h.open("other", nil)
	require.Equal(t, protocol.FrameOpened, f.typ(), "%v", f)
	require.Less(t, time.Since(start), patience, "the other open waited for the stalled reader")
	require.Eventually(t, func() bool { return len(h.e.list()) == 2 }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		_, err := os.Lstat(path)
		return os.IsNotExist(err)
	}, patience+5*time.Second, 10*time.Millisecond, "the stalled reply fifo is given up and removed")
	require.Equal(t, protocol.FrameClosed, h.close("stalled").typ())
}

// An open with "reuse" of a session whose first open still waits for its
// child (here: for its first prompt, which it shows once a file exists)
// waits as that open does: it answers with the child's pid once the
// session is ready, not with pid 0 or before the prompt.
func TestSessionsReuseWaitsForReady(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	h := startHarness(t, program{"/bin/sh", "-c", `while [ ! -e "$0" ]; do sleep 0.01; done; while printf '> '; do IFS= read -r l || exit; eval "$l"; done`, gate}, nil)
	openName, openR, openDone := h.replyFIFO()
	defer openDone()
	reuseName := "reuse-" + strings.Repeat("r", 8)
	reusePath := filepath.Join(h.dir, "replies", reuseName)
	require.NoError(t, syscall.Mkfifo(reusePath, 0o600))
	defer os.Remove(reusePath)
	fd, err := syscall.Open(reusePath, syscall.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	reuseR := os.NewFile(uintptr(fd), reusePath) // pollable: reads wait, under a deadline
	defer reuseR.Close()
	h.write(`{"id":"o1","reply":"` + openName + `","op":"open","session":"late","prompt":"^> $"}` + "\n" +
		`{"id":"o2","reply":"` + reuseName + `","op":"open","session":"late","reuse":true}` + "\n")
	// The loop acted on both lines once it answered a list written after
	// them: an answer it wrote at once is in the reuse's FIFO by now.
	require.Equal(t, protocol.FrameSessions, h.do(map[string]any{"op": "list"}).typ())
	n, err := syscall.Read(fd, make([]byte, 4096))
	require.ErrorIs(t, err, syscall.EAGAIN, "the reuse was answered before the session was ready (%d bytes)", n)

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	opened := readFrame(t, openR)
	require.Equal(t, protocol.FrameOpened, opened.typ(), "%v", opened)
	require.NoError(t, reuseR.SetReadDeadline(time.Now().Add(10*time.Second)))
	reused := readFrame(t, bufio.NewReader(reuseR))
	require.Equal(t, protocol.FrameOpened, reused.typ(), "%v", reused)
	require.Equal(t, true, reused["reused"], "%v", reused)
	require.NotZero(t, reused.num("pid"), "%v", reused)
	require.Equal(t, opened.num("pid"), reused.num("pid"))
	require.Equal(t, protocol.FrameClosed, h.close("late").typ())
}
