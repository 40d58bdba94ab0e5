//go:build linux

package sessions

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/procfs"
	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// harness is a Table on a temporary DIR, run by the test: DIR/in and a
// writer of it, DIR/replies, DIR/sessions, and a way to stop it.
type harness struct {
	t       *testing.T
	e       *Table
	dir     string
	in      *os.File // writes control lines
	stop    context.CancelFunc
	stopped chan struct{} // Run returned
	forward chan os.Signal
}

// program is what the harness's sessions run: PROGRAM ARG..., with the
// open line's args appended.
type program []string

// promptShell prints "> " as its prompt and runs each line it reads; a
// read a trap that sets caught interrupted is read again, without a
// second prompt, which could end the turn after it early.
var promptShell = program{"/bin/sh", "-c",
	`while printf '> '; do while ! IFS= read -r l; do [ -n "$caught" ] || exit; caught=; done; eval "$l"; done`}

// startHarness runs sessions mode; every session runs prog. It checks,
// when the test ends, that Run returned and that no descriptor, child or
// goroutine of the test is left.
func startHarness(t *testing.T, prog program, tune func(*Config)) *harness {
	t.Helper()
	leakcheck.Check(t, procfs.Reserve)
	dir := t.TempDir()
	root, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	sessionsDir, err := root.MakeSub("sessions", 0o755)
	require.NoError(t, err)
	replies, err := root.MakeSub("replies", 0o733|os.ModeSticky)
	require.NoError(t, err)
	for _, name := range []string{"in", "out"} {
		_, err := fifo.MakeAt(root, name, 0o600)
		require.NoError(t, err)
	}
	src, err := fifo.OpenSourceAt(root, "in")
	require.NoError(t, err)
	sink, err := fifo.OpenSinkAt(root, "out")
	require.NoError(t, err)
	in, err := fifo.OpenWriterNowAt(root, "in")
	require.NoError(t, err)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	reaper := child.NewReaper(log)
	h := &harness{t: t, dir: dir, in: in, stopped: make(chan struct{}), forward: make(chan os.Signal, 4)}
	cfg := &Config{Run: runConfig(t, prog, log, h.forward), Sessions: sessionsDir, Replies: replies}
	if tune != nil {
		tune(cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	h.e = New(cfg, reaper, src, sink, func() {})
	go func() { defer close(h.stopped); h.e.Run(ctx) }()
	t.Cleanup(func() {
		h.stopWithin(10 * time.Second)
		reaper.Close()
		in.Close()
		replies.Close()
		sessionsDir.Close()
		root.Close()
	})
	return h
}

// runConfig is the run configuration of the harness's agent: every
// session runs prog and its open line's args, on pipes with stderr in
// out unless the line asks for a terminal, and is not restarted.
func runConfig(t *testing.T, prog program, log *slog.Logger, forward <-chan os.Signal) *config.Run {
	t.Helper()
	run := &config.Run{Mode: "sessions", Program: prog[0], Args: prog[1:], AllowArgs: true,
		MaxSessions: 16, MaxConcurrent: 1, StopTimeout: 500 * time.Millisecond, MaxRequest: 1 << 20, Perm: 0o660,
		RestartWindow: time.Minute, BackoffMin: 10 * time.Millisecond, BackoffMax: time.Second,
		Given: config.Given{Restart: "never", Stderr: "out", TtySize: "80x24"}, Cgroup: "off", Create: true,
		Log: log, Forward: forward}
	require.NoError(t, run.Finish(t.TempDir()))
	return run
}

// stopWithin stops the engine and fails unless Run returns within d.
func (h *harness) stopWithin(d time.Duration) {
	h.t.Helper()
	h.stop()
	select {
	case <-h.stopped:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		h.t.Fatalf("Run did not return within %v of the stop:\n%s", d, buf[:runtime.Stack(buf, true)])
	}
}

// frame is an answer, decoded loosely.
type frame map[string]any

func (f frame) typ() string { s, _ := f["type"].(string); return s }
func (f frame) num(k string) int {
	n, _ := f[k].(float64)
	return int(n)
}

// replyFIFO makes a reply FIFO in DIR/replies and opens it for reading
// (and writing, so that it never reads EOF); done closes and removes it.
func (h *harness) replyFIFO() (name string, r *bufio.Reader, done func()) {
	h.t.Helper()
	name = randname.New()
	path := filepath.Join(h.dir, "replies", name)
	require.NoError(h.t, unix.Mkfifo(path, 0o600))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(h.t, err)
	var once sync.Once
	done = func() { once.Do(func() { f.Close(); os.Remove(path) }) }
	h.t.Cleanup(done)
	f.SetReadDeadline(time.Now().Add(20 * time.Second))
	return name, bufio.NewReader(f), done
}

// do writes the control line c, with a reply FIFO of its own, and returns
// its one answer.
func (h *harness) do(c map[string]any) frame {
	h.t.Helper()
	name, r, done := h.replyFIFO()
	defer done()
	c["reply"] = name
	b, err := json.Marshal(c)
	require.NoError(h.t, err)
	h.write(string(b) + "\n")
	return readFrame(h.t, r)
}

// write writes lines to DIR/in.
func (h *harness) write(lines string) {
	h.t.Helper()
	h.in.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := h.in.Write([]byte(lines))
	require.NoError(h.t, err)
}

// readFrame reads one frame.
func readFrame(t *testing.T, r *bufio.Reader) frame {
	t.Helper()
	line, err := r.ReadBytes('\n')
	require.NoError(t, err, "read a frame")
	var f frame
	require.NoError(t, json.Unmarshal(line, &f), "frame %q", line)
	return f
}

func (h *harness) open(name string, more map[string]any) frame {
	h.t.Helper()
	c := map[string]any{"op": "open", "session": name}
	for k, v := range more {
		c[k] = v
	}
	return h.do(c)
}

func (h *harness) close(name string) frame {
	h.t.Helper()
	return h.do(map[string]any{"op": "close", "session": name})
}

// ask asks session name input on its ask FIFO and returns the answer's
// text and its last frame.
func (h *harness) ask(name, input string) (string, frame) {
	h.t.Helper()
	reply, r, done := h.replyFIFO()
	defer done()
	b, err := json.Marshal(map[string]any{"id": "a1", "reply": reply, "input": input, "timeout": "10s"})
	require.NoError(h.t, err)
	w, err := os.OpenFile(h.sessionPath(name, "ask"), os.O_WRONLY|unix.O_NONBLOCK, 0)
	require.NoError(h.t, err)
	_, err = w.Write(append(b, '\n'))
	w.Close()
	require.NoError(h.t, err)
	text := ""
	for {
		f := readFrame(h.t, r)
		if f.typ() != protocol.FrameAnswer {
			return text, f
		}
		s, _ := f["data"].(string)
		text += s
	}
}

// sessionPath is a session's file.
func (h *harness) sessionPath(name, file string) string {
	return filepath.Join(h.dir, "sessions", name, file)
}

// noSessionDir checks that session name's directory is gone.
func (h *harness) noSessionDir(name string) {
	h.t.Helper()
	_, err := os.Lstat(filepath.Join(h.dir, "sessions", name))
	require.ErrorIs(h.t, err, os.ErrNotExist, "the session's directory is removed")
}
