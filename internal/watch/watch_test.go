//go:build linux

package watch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// kernelWatches counts the watches of the instance, as its fdinfo lists
// them ("inotify wd:...").
func kernelWatches(t *testing.T) int {
	t.Helper()
	require.NoError(t, Start())
	info, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(the.fd()))
	require.NoError(t, err)
	return strings.Count(string(info), "inotify wd:")
}

// events collects the events a watch is told.
type events struct {
	mu  sync.Mutex
	got []Event
	ch  chan struct{}
}

func newEvents() *events { return &events{ch: make(chan struct{}, 64)} }

func (e *events) fn(ev Event) {
	e.mu.Lock()
	e.got = append(e.got, ev)
	e.mu.Unlock()
	select {
	case e.ch <- struct{}{}:
	default:
	}
}

// wait waits until an event matches.
func (e *events) wait(t *testing.T, match func(Event) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		e.mu.Lock()
		for _, ev := range e.got {
			if match(ev) {
				e.mu.Unlock()
				return
			}
		}
		e.mu.Unlock()
		select {
		case <-e.ch:
		case <-deadline:
			t.Fatal("no such event")
		}
	}
}

func (e *events) all() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.got...)
}

// dirFD opens dir as a watch through its descriptor would.
func dirFD(t *testing.T, dir string) string {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	return "/proc/self/fd/" + strconv.Itoa(fd)
}

// TestWatchShared: two watches of one directory, added by different
// paths, share one kernel watch; each is told only the events of its
// mask (bytes written into a FIFO there are no entry events); the kernel
// watch goes with the last of them.
func TestWatchShared(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "in"), 0o600))
	before := kernelWatches(t)
	created, removed := newEvents(), newEvents()
	a, err := Add(dirFD(t, dir), unix.IN_CREATE|unix.IN_ONLYDIR, created.fn)
	require.NoError(t, err)
	b, err := Add(dir, unix.IN_DELETE, removed.fn)
	require.NoError(t, err)
	require.Equal(t, before+1, kernelWatches(t), "kernel watches of one directory")

	f, err := os.OpenFile(filepath.Join(dir, "in"), os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("bytes\n"))
	require.NoError(t, err)
	f.Close()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), nil, 0o600))
	created.wait(t, func(ev Event) bool { return ev.Name == "x" && ev.Mask&unix.IN_CREATE != 0 })
	require.NoError(t, os.Remove(filepath.Join(dir, "x")))
	removed.wait(t, func(ev Event) bool { return ev.Name == "x" && ev.Mask&unix.IN_DELETE != 0 })
	for _, ev := range created.all() {
		require.Equal(t, "x", ev.Name, "an event not of the watch's own mask: %+v", ev)
		require.NotZero(t, ev.Mask&unix.IN_CREATE, "an event not of the watch's own mask: %+v", ev)
	}

	a.Remove()
	require.Equal(t, before+1, kernelWatches(t), "the kernel watch went with one of its two watches")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "y"), nil, 0o600))
	require.NoError(t, os.Remove(filepath.Join(dir, "y")))
	removed.wait(t, func(ev Event) bool { return ev.Name == "y" })
	b.Remove()
	b.Remove() // twice: nothing more
	require.Equal(t, before, kernelWatches(t), "kernel watches left after the last watch went")
}

// TestWatchGone: a watched directory that is removed ends its watch with
// IN_IGNORED (once no descriptor holds it any more), and a Remove after
// that does nothing.
func TestWatchGone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.Mkdir(dir, 0o700))
	before := kernelWatches(t)
	got := newEvents()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	w, err := Add("/proc/self/fd/"+strconv.Itoa(fd), unix.IN_CREATE|unix.IN_ONLYDIR, got.fn)
	unix.Close(fd)
	require.NoError(t, err)
	require.NoError(t, os.Remove(dir))
	got.wait(t, func(ev Event) bool { return ev.Mask&unix.IN_IGNORED != 0 })
	require.Equal(t, before, kernelWatches(t))
	w.Remove()
	require.Equal(t, before, kernelWatches(t))
}

// TestWatchNotADirectory: IN_ONLYDIR refuses a file.
func TestWatchNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := Add(file, unix.IN_CREATE|unix.IN_ONLYDIR, func(Event) {})
	require.ErrorIs(t, err, unix.ENOTDIR)
}

// TestWatchRemoveWaits: once Remove returned, the watch's func is not
// called any more, and none is under way.
func TestWatchRemoveWaits(t *testing.T) {
	dir := t.TempDir()
	var calls, inFn atomic.Int32
	w, err := Add(dir, unix.IN_CREATE, func(Event) {
		inFn.Add(1)
		calls.Add(1)
		time.Sleep(time.Millisecond) // a func under way while Remove is called
		inFn.Add(-1)
	})
	require.NoError(t, err)
	for i := range 50 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o600))
	}
	require.Eventually(t, func() bool { return calls.Load() > 0 }, 10*time.Second, time.Millisecond)
	w.Remove()
	require.Zero(t, inFn.Load(), "a call under way after Remove returned")
	after := calls.Load()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "late"), nil, 0o600))
	// A later event would reach the func at once: a watch of the same
	// directory sees it come and go first.
	seen := newEvents()
	w2, err := Add(dir, unix.IN_CREATE, seen.fn)
	require.NoError(t, err)
	defer w2.Remove()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "later"), nil, 0o600))
	seen.wait(t, func(ev Event) bool { return ev.Name == "later" })
	require.Equal(t, after, calls.Load(), "the func was called after Remove returned")
}
