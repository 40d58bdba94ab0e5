//go:build linux

package execmode

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// A reply reader that leaves is seen when it leaves, not on a clock: the
// request is canceled within milliseconds (a watch that looked every
// 100 ms took 50 ms in the middle), and frames written before do not wake
// the watch for nothing.
func TestFramesSeeTheReaderLeaveAtOnce(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	replies, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer replies.Close()
	g := bound.NewRule(time.Second)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var seen []time.Duration
	for i := range 10 {
		name := fmt.Sprintf("r%d", i)
		require.NoError(t, unix.Mkfifo(filepath.Join(dir, name), 0o600))
		rd, err := fifo.OpenReaderNowAt(replies, name)
		require.NoError(t, err)
		reply, err := fifo.OpenReply(replies, name)
		require.NoError(t, err)
		canceled := make(chan time.Time, 1)
		w := newFrames(name, reply, nil, g, log, func(string) { canceled <- time.Now() })
		w.write([]byte("frame\n"))
		rd.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = rd.Read(make([]byte, 64))
		require.NoError(t, err)
		// The reader stays a while, a different while each time, as a
		// sender waiting for a quiet child does; then it leaves.
		time.Sleep(time.Duration(5+13*i) * time.Millisecond)
		left := time.Now()
		rd.Close()
		select {
		case at := <-canceled:
			seen = append(seen, at.Sub(left))
		case <-time.After(10 * time.Second):
			t.Fatal("the request was not canceled when its reply reader left")
		}
		w.close(func(r *fifo.Reply) { r.Close() })
	}
	slices.Sort(seen)
	t.Logf("reader gone seen after %v (median), %v (slowest)", seen[len(seen)/2], seen[len(seen)-1])
	require.Less(t, seen[len(seen)/2], 20*time.Millisecond, "the reader watch wakes on a clock, not when the reader leaves")
	require.Zero(t, g.Watching(), "every reply writer forgotten")
}
