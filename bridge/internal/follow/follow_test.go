//go:build linux

package follow

import (
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/sharedir"
)

// idle waits until f has no look under way (no goroutine beyond
// goroutines runs), and reports whether its timer is armed.
func idle(t *testing.T, f *Follower, goroutines int) (due bool) {
	t.Helper()
	// Not require.Eventually: it runs its condition on a goroutine.
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > goroutines; {
		require.True(t, time.Now().Before(deadline), "goroutines of an idle follower: %d, want %d", runtime.NumGoroutine(), goroutines)
		time.Sleep(time.Millisecond)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.due
}

// TestFollowerIdle: a follower whose FIFO is where it should be holds no
// goroutine and no armed timer; a FIFO replaced is served at the event,
// with nothing armed after; one removed is made again after remakeDelay
// (a timer armed only while it is missing), and nothing stays armed once
// it is back.
func TestFollowerIdle(t *testing.T) {
	leakcheck.Check(t)
	d, err := sharedir.Open(t.TempDir(), false)
	require.NoError(t, err)
	defer d.Close()
	_, err = fifo.MakeAt(d, "in", 0o600)
	require.NoError(t, err)
	src, err := fifo.OpenSourceAt(d, "in")
	require.NoError(t, err)
	defer src.Close()

	changed := make(chan struct{}, 16)
	made := make(chan string, 16)
	goroutines := runtime.NumGoroutine()
	f := Start([]End{{Dir: d, Name: "in", Path: d.Join("in"), FIFO: src, Mode: 0o600, Role: RoleIn}},
		Options{Create: true, Log: slog.New(slog.DiscardHandler), Changed: func() { changed <- struct{}{} },
			Created: func(_ *sharedir.Dir, name string) { made <- name }})
	defer f.Stop()
	require.False(t, idle(t, f, goroutines), "a timer armed while the FIFO is there")

	require.NoError(t, unix.Renameat(d.Fd(), "in", d.Fd(), "in.old"))
	_, err = fifo.MakeAt(d, "in", 0o600)
	require.NoError(t, err)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the replaced FIFO was not served")
	}
	require.False(t, idle(t, f, goroutines), "a timer armed after the replaced FIFO was served")

	removed := time.Now()
	require.NoError(t, d.Remove("in"))
	select {
	case name := <-made:
		require.Equal(t, "in", name)
		require.GreaterOrEqual(t, time.Since(removed), remakeDelay, "made again before remakeDelay")
	case <-time.After(10 * time.Second):
		t.Fatal("the removed FIFO was not made again")
	}
	<-changed
	require.False(t, idle(t, f, goroutines), "a timer armed once the FIFO was made again")
}

// TestFollowerNoCreate: without Create a removed FIFO arms nothing; one
// made there again is served at its event.
func TestFollowerNoCreate(t *testing.T) {
	leakcheck.Check(t)
	d, err := sharedir.Open(t.TempDir(), false)
	require.NoError(t, err)
	defer d.Close()
	_, err = fifo.MakeAt(d, "out", 0o600)
	require.NoError(t, err)
	sink, err := fifo.OpenSinkAt(d, "out")
	require.NoError(t, err)
	defer sink.Close()
	changed := make(chan struct{}, 16)
	goroutines := runtime.NumGoroutine()
	f := Start([]End{{Dir: d, Name: "out", Path: d.Join("out"), FIFO: sink, Mode: 0o600, Role: RoleOut}},
		Options{Log: slog.New(slog.DiscardHandler), Changed: func() { changed <- struct{}{} }})
	defer f.Stop()
	require.NoError(t, d.Remove("out"))
	require.False(t, idle(t, f, goroutines), "a timer armed for a missing FIFO without Create")
	_, err = fifo.MakeAt(d, "out", 0o600)
	require.NoError(t, err)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the FIFO made again was not served")
	}
}
