//go:build linux

package follow

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/sharedir"
)

// TestCarryOverOneAtATime: while nobody reads the output FIFO, the
// child's write to it waits, holding the Sink. Someone who replaces
// DIR/out every second must not make the follower start one more
// goroutine each time, every one of them waiting for that write, for as
// long as nobody reads: one carries the bytes over at a time.
func TestCarryOverOneAtATime(t *testing.T) {
	leakcheck.Check(t)
	d, err := sharedir.Open(t.TempDir(), false)
	require.NoError(t, err)
	defer d.Close()
	_, err = fifo.MakeAt(d, "out", 0o600)
	require.NoError(t, err)
	sink, err := fifo.OpenSinkAt(d, "out")
	require.NoError(t, err)
	wrote := make(chan error, 1)
	go func() { _, err := sink.Write(make([]byte, 16<<20)); wrote <- err }() // more than any pipe takes

	changed := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	before := runtime.NumGoroutine()
	go func() {
		defer close(done)
		Ends(ctx, []End{{Dir: d, Name: "out", Path: d.Join("out"), FIFO: sink, Mode: 0o600, Role: RoleOut}},
			Options{Log: slog.New(slog.DiscardHandler), Sink: sink, Changed: func() { changed <- struct{}{} }})
	}()
	const replacements = 4
	for i := range replacements {
		require.NoError(t, unix.Renameat(d.Fd(), "out", d.Fd(), "out."+strconv.Itoa(i)))
		_, err := fifo.MakeAt(d, "out", 0o600)
		require.NoError(t, err)
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatal("the replaced FIFO was not served")
		}
	}
	// Ends' own goroutine, and one that carries bytes over; a look may
	// still be under way, in a goroutine that ends by itself. Not
	// require.Eventually: it runs its condition on a goroutine.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine()-before > 2; {
		require.True(t, time.Now().Before(deadline), "goroutines that wait to carry bytes over: %d", runtime.NumGoroutine()-before-1)
		time.Sleep(time.Millisecond)
	}

	cancel()
	require.NoError(t, sink.Close())
	require.ErrorIs(t, <-wrote, fifo.ErrClosed)
	<-done
}
