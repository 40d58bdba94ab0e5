//go:build linux

package stream

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// watchReply makes a reply FIFO in a directory of its own, opens its read
// end (the test's) and its reply for the fanout, and returns both.
func watchReply(t *testing.T) (*fifo.Reply, *os.File) {
	t.Helper()
	d, err := sharedir.Open(t.TempDir(), false)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	_, err = fifo.MakeAt(d, "r", 0o600)
	require.NoError(t, err)
	r, err := fifo.OpenReaderNowAt(d, "r")
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	reply, err := fifo.OpenReply(d, "r")
	require.NoError(t, err)
	return reply, r
}

// frames reads frames from r until one of type last, and returns them.
func frames(t *testing.T, r *os.File, last string) []protocol.Frame {
	t.Helper()
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(r)
	var all []protocol.Frame
	for {
		line, err := br.ReadBytes('\n')
		require.NoError(t, err, "after %v", all)
		var f protocol.Frame
		require.NoError(t, json.Unmarshal(line, &f))
		all = append(all, f)
		if f.Type == last {
			return all
		}
	}
}

// A character cut between two offers is sent whole, as text; a terminal's
// output is cleaned across offers; the child's end is each watch's exit
// frame, with the child's status.
func TestWatcherFrames(t *testing.T) {
	leakcheck.Check(t)
	f := newFanout(time.Second, slog.New(slog.DiscardHandler), nil)
	raw, rawR := watchReply(t)
	clean, cleanR := watchReply(t)
	require.NoError(t, f.add("raw", raw, false, 7))
	require.NoError(t, f.add("clean", clean, true, 7))
	require.Equal(t, 2, f.count())
	for _, p := range []string{"caf\xc3", "\xa9 \x1b[1", "mbold\x1b[0m\r", "\n"} {
		f.offer([]byte(p))
	}
	f.childEnded(child.Signaled(9))
	require.Zero(t, f.count())
	f.finish()
	for r, want := range map[*os.File]string{rawR: "café \x1b[1mbold\x1b[0m\r\n", cleanR: "café bold\n"} {
		all := frames(t, r, protocol.FrameExit)
		require.Equal(t, protocol.Frame{ID: all[0].ID, Type: protocol.FrameWatching, Pid: 7}, all[0])
		var got strings.Builder
		for _, fr := range all[1 : len(all)-1] {
			require.Equal(t, protocol.FrameOutput, fr.Type)
			require.Nil(t, fr.DataB64, "a character cut in two went as bytes")
			got.WriteString(fr.Data)
		}
		require.Equal(t, want, got.String())
		last := all[len(all)-1]
		require.Equal(t, 137, *last.Code)
		require.Equal(t, "KILL", last.Signal)
	}
}

// A watcher that does not read holds at most watchHeld; what comes after
// is dropped and counted, and told in one lost frame once it has read
// what was held; then the output goes on. The fanout's close ends it with
// a closed frame, and refuses later watches.
func TestWatcherLost(t *testing.T) {
	leakcheck.Check(t)
	f := newFanout(time.Second, slog.New(slog.DiscardHandler), nil)
	reply, r := watchReply(t)
	require.NoError(t, f.add("w", reply, false, 0))
	piece := []byte(strings.Repeat("x", 64<<10))
	const n = 64 // 4 MiB: more than the FIFO and watchHeld
	for range n {
		f.offer(piece)
	}
	// Once the watcher has caught up, what comes is taken again.
	got, lost := 0, 0
	br := bufio.NewReader(r)
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	for got+lost < n*len(piece) {
		line, err := br.ReadBytes('\n')
		require.NoError(t, err)
		var fr protocol.Frame
		require.NoError(t, json.Unmarshal(line, &fr))
		switch fr.Type {
		case protocol.FrameOutput:
			got += len(fr.Data)
		case protocol.FrameLost:
			require.Zero(t, lost, "one lost frame for one drop")
			lost = int(fr.Lost)
		}
	}
	require.NotZero(t, lost)
	require.LessOrEqual(t, got, watchHeld+pipeio.Capacity(r))
	f.offer([]byte("after"))
	f.finish()
	require.ErrorIs(t, f.add("late", reply, false, 0), errWatchClosed)
	var rest []string
	for {
		line, err := br.ReadBytes('\n')
		require.NoError(t, err)
		var fr protocol.Frame
		require.NoError(t, json.Unmarshal(line, &fr))
		if fr.Type == protocol.FrameClosed {
			break
		}
		rest = append(rest, fr.Data)
	}
	require.Equal(t, []string{"after"}, rest)
}
