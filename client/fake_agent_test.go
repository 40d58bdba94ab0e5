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

// fakeAgent plays an exec-mode agent on temporary FIFOs: it reads request
// lines from DIR/in and hands each to the test, which answers it by hand.
type fakeAgent struct {
	t        *testing.T
	dir      string
	in       *os.File
	requests chan protocol.Parsed
	raw      chan []byte // every line read, blank ones too
	done     chan struct{}
	once     sync.Once
	lock     *os.File // DIR/lock, held as an agent does until it dies
}

// newDir makes DIR with an input FIFO nobody reads and replies/.
func newDir(t *testing.T) string {
	t.Helper()
	return newDirAt(t, t.TempDir())
}

// newDirAt makes an input FIFO nobody reads and replies/ in dir.
func newDirAt(t *testing.T, dir string) string {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "in"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "replies"), 0o755))
	return dir
}

// startFakeAgent reads DIR/in until the test ends or stopReading is called.
func startFakeAgent(t *testing.T, dir string) *fakeAgent {
	t.Helper()
	in, err := os.OpenFile(filepath.Join(dir, "in"), os.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	a := &fakeAgent{t: t, dir: dir, in: in, requests: make(chan protocol.Parsed, 16), raw: make(chan []byte, 64), done: make(chan struct{})}
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	a.lock, err = status.Lock(d, 0o644)
	d.Close()
	require.NoError(t, err)
	go a.read()
	t.Cleanup(a.stopReading)
	t.Cleanup(a.die)
	return a
}

// die releases the agent's lock, as the death of an agent does.
func (a *fakeAgent) die() { a.lock.Close() }

func (a *fakeAgent) read() {
	defer close(a.done)
	lines := protocol.NewLineReader(a.in, 1<<20)
	for {
		line, err := lines.Next()
		if err != nil {
			return
		}
		a.raw <- append([]byte(nil), line...)
		if protocol.IsBlank(line) {
			continue
		}
		req, _ := protocol.ParseRequest(line)
		a.requests <- req
	}
}

// stopReading closes the input FIFO, as an agent does when it stops, and
// waits for the reading goroutine.
func (a *fakeAgent) stopReading() {
	a.once.Do(func() { a.in.Close(); <-a.done })
}

// next returns the next request read.
func (a *fakeAgent) next() protocol.Parsed {
	a.t.Helper()
	select {
	case r := <-a.requests:
		return r
	case <-time.After(10 * time.Second):
		a.t.Fatal("no request arrived")
		return protocol.Parsed{}
	}
}

// openReply opens the reply FIFO a request names, as the agent does.
func (a *fakeAgent) openReply(req protocol.Parsed) *os.File {
	a.t.Helper()
	w, err := fifo.OpenWriterNow(filepath.Join(a.dir, "replies", req.Reply))
	require.NoError(a.t, err)
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
