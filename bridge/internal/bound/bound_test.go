//go:build linux

package bound

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
)

func TestQueueBound(t *testing.T) {
	q := NewQueue[int](3)
	for i := range 3 {
		require.True(t, q.Put(i))
	}
	require.False(t, q.Put(3), "one more than the limit")
	require.Equal(t, []int{1}, q.Remove(func(x int) bool { return x == 1 }))
	require.True(t, q.Put(4))
	head, ok := q.Head()
	require.True(t, ok)
	require.Equal(t, 0, head)
	require.Equal(t, 0, q.Pop())
	require.Equal(t, []int{2, 4}, q.Drain())
	require.Zero(t, q.Len())
	_, ok = q.Head()
	require.False(t, ok)
}

// fullPipe is a pipe whose buffer is full: its reader takes nothing.
func fullPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	w.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	for {
		if _, err := w.Write(make([]byte, 4096)); err != nil {
			require.True(t, os.IsTimeout(err), "fill the pipe: %v", err)
			return r, w
		}
	}
}

// A reader that takes nothing is given up after the patience; one that
// takes a little at a time, however slowly overall, is not.
func TestWriterPatience(t *testing.T) {
	leakcheck.Check(t)
	rule := NewRule(0)
	require.Equal(t, ReaderPatience, rule.Patience(), "at least a second")

	r, w := fullPipe(t)
	wr := rule.NewWriter(w)
	defer wr.Close()
	start := time.Now()
	_, err := wr.Write(make([]byte, 100))
	require.True(t, os.IsTimeout(err), "a reader that takes nothing: %v", err)
	// Given up at the patience: never before it, and on a busy machine
	// perhaps seconds after it.
	took := time.Since(start)
	require.GreaterOrEqual(t, took, ReaderPatience)
	require.Less(t, took, ReaderPatience+5*time.Second)

	// The reader takes 4 KiB every 300 ms: 16 KiB take over a second, and
	// are written.
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for range 8 {
			time.Sleep(300 * time.Millisecond) // a slow reader is what the test is about
			_, err := r.Read(buf)
			require.NoError(t, err)
		}
	}()
	n, err := wr.Write(make([]byte, 16<<10))
	require.NoError(t, err)
	require.Equal(t, 16<<10, n)
	<-done
}

// A stop's deadline, sooner than the patience, reaches the write under
// way.
func TestWriterStopDeadline(t *testing.T) {
	leakcheck.Check(t)
	rule := NewRule(100 * time.Millisecond)
	_, w := fullPipe(t)
	wr := rule.NewWriter(w)
	defer wr.Close()
	require.Equal(t, 1, rule.Watching())
	result := make(chan error, 1)
	go func() { _, err := wr.Write([]byte("x")); result <- err }()
	select {
	case err := <-result:
		t.Fatalf("the write returned before any deadline: %v", err)
	case <-time.After(300 * time.Millisecond): // well before the patience
	}
	deadline := rule.Deadline() // begins the stop
	require.True(t, rule.Stopping())
	var err error
	select {
	case err = <-result:
	case <-time.After(10 * time.Second):
		t.Fatal("the write under way was not given up at the stop's deadline")
	}
	require.True(t, os.IsTimeout(err), "%v", err)
	// Given up at the deadline, not before it (a busy machine may make it
	// later).
	require.False(t, time.Now().Before(deadline), "the write was given up before the stop's deadline %v", deadline)
}
