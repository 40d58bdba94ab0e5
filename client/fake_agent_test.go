//go:build linux

package client

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// fakeServer plays an agent's reading of one of its input FIFOs in DIR
// (DIR/in, DIR/ask) on temporary FIFOs, holding DIR/lock as an agent
// does: it parses each line read and hands it to the test, which answers
// it by hand on the reply FIFO the line names.
type fakeServer[T any] struct {
	t     testing.TB
	dir   string
	in    *os.File
	got   chan T         // each line that is not blank, parsed
	raw   chan []byte    // the first lines read, blank ones too
	reply func(T) string // the reply FIFO a line names
	done  chan struct{}
	once  sync.Once
	lock  *os.File // DIR/lock, held as an agent does until it dies
}

// fakeAgent plays an exec-mode agent: it reads request lines from DIR/in.
type fakeAgent struct{ *fakeServer[protocol.Parsed] }

// newDir makes DIR with an input FIFO nobody reads and replies/.
func newDir(t *testing.T) string {
	t.Helper()
	return newDirAt(t, t.TempDir())
}

// newDirAt makes an input FIFO nobody reads and replies/ in dir.
func newDirAt(t testing.TB, dir string) string {
	t.Helper()
	return makeServed(t, dir, inName)
}

// makeServed makes the input FIFO name, which nobody reads, and replies/
// in dir.
func makeServed(t testing.TB, dir, name string) string {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, name), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "replies"), 0o755))
	return dir
}

// startFakeAgent reads DIR/in until the test ends or stopReading is called.
func startFakeAgent(t *testing.T, dir string) *fakeAgent {
	t.Helper()
	parse := func(line []byte) protocol.Parsed { req, _ := protocol.ParseRequest(line); return req }
	return &fakeAgent{startFakeServer(t, dir, inName, parse, func(req protocol.Parsed) string { return req.Reply })}
}

// startFakeServer reads DIR/name until the test ends or stopReading is
// called, holding DIR/lock until then or die.
func startFakeServer[T any](t testing.TB, dir, name string, parse func([]byte) T, reply func(T) string) *fakeServer[T] {
	t.Helper()
	s := startFakeReader(t, dir, filepath.Join(dir, name), parse, reply)
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	s.lock, err = status.Lock(d, 0o644)
	d.Close()
	require.NoError(t, err)
	t.Cleanup(s.die)
	return s
}

// startFakeReader reads the FIFO at path until the test ends or
// stopReading is called, for an agent whose directory is dir, without
// taking its lock.
func startFakeReader[T any](t testing.TB, dir, path string, parse func([]byte) T, reply func(T) string) *fakeServer[T] {
	t.Helper()
	in, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	s := &fakeServer[T]{t: t, dir: dir, in: in, got: make(chan T, 16), raw: make(chan []byte, 64), reply: reply, done: make(chan struct{})}
	go s.read(parse)
	t.Cleanup(s.stopReading)
	return s
}

// die releases the agent's lock, as the death of an agent does.
func (s *fakeServer[T]) die() {
	if s.lock != nil {
		s.lock.Close()
	}
}

func (s *fakeServer[T]) read(parse func([]byte) T) {
	defer close(s.done)
	lines := protocol.NewLineReader(s.in, 1<<20)
	for {
		line, err := lines.Next()
		if err != nil {
			return
		}
		select {
		case s.raw <- append([]byte(nil), line...):
		default: // only the first lines are kept
		}
		if protocol.IsBlank(line) {
			continue
		}
		s.got <- parse(line)
	}
}

// requireNothingRead fails the test if any line reached the FIFO before
// a marker line written now: one that was in it when this is called, or
// that a call that returned put there, comes first.
func (s *fakeServer[T]) requireNothingRead() {
	s.t.Helper()
	_, err := s.in.Write([]byte("marker\n")) // s.in is open for reading and writing
	require.NoError(s.t, err)
	select {
	case line := <-s.raw:
		require.Equal(s.t, "marker", string(line), "a line was written into %s", s.in.Name())
	case <-time.After(10 * time.Second):
		s.t.Fatal("the marker line did not arrive")
	}
	s.next() // the marker, parsed: the next line the test takes is a new one
}

// stopReading closes the input FIFO, as an agent does when it stops, and
// waits for the reading goroutine.
func (s *fakeServer[T]) stopReading() {
	s.once.Do(func() { s.in.Close(); <-s.done })
}

// next returns the next line read, parsed.
func (s *fakeServer[T]) next() T {
	s.t.Helper()
	select {
	case r := <-s.got:
		return r
	case <-time.After(10 * time.Second):
		s.t.Fatal("no line arrived")
		var zero T
		return zero
	}
}

// openReply opens the reply FIFO line names, as the agent does.
func (s *fakeServer[T]) openReply(line T) *os.File {
	s.t.Helper()
	w, err := fifo.OpenWriterNow(filepath.Join(s.dir, "replies", s.reply(line)))
	require.NoError(s.t, err)
	return w
}

// writeStatus writes DIR/status.json for an agent of pid in state.
func writeStatus(t *testing.T, dir string, pid int, state string) {
	t.Helper()
	now := time.Now().UTC()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, status.WriteAt(d, "status.json", status.Status{PID: pid, Mode: "exec", State: state, StartedAt: now, UpdatedAt: now}, 0o644))
}

// checkLeaks fails t unless, when it ends, the process has the descriptors
// and goroutines it had at the start.
func checkLeaks(t *testing.T) {
	t.Helper()
	fds, goroutines := leakcheck.FDs(t), runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for leakcheck.FDs(t) != fds || runtime.NumGoroutine() > goroutines {
			if time.Now().After(deadline) {
				t.Errorf("%d descriptors and %d goroutines after the test, %d and %d before", leakcheck.FDs(t), runtime.NumGoroutine(), fds, goroutines)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// requireNoReplies fails t unless DIR/replies is empty.
func requireNoReplies(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "replies"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	require.Empty(t, ents, "reply FIFOs left behind")
}
