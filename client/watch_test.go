//go:build linux

package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
)

// TestWatchFrames: a watch's line names its session and raw; its output
// frames reach Stdout, its lost frames Lost, in order; it ends with the
// child (its status) or the session's close; an error frame is a
// *RejectedError. A stream agent is watched through DIR/control, and
// nothing is written for a session of it, nor without one to a
// sessions agent.
func TestWatchFrames(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	f.openSession("sh1")
	for _, tc := range []struct {
		name   string
		frames func(id string) [][]byte
		want   Watched
		err    bool
	}{
		{"closed", func(id string) [][]byte {
			return [][]byte{protocol.AppendWatching(nil, id, 7), protocol.AppendData(nil, id, protocol.FrameOutput, []byte("ab")),
				protocol.AppendLost(nil, id, 5), protocol.AppendData(nil, id, protocol.FrameOutput, []byte("c")), protocol.AppendClosed(nil, id, 0)}
		}, Watched{Closed: true}, false},
		{"exit", func(id string) [][]byte {
			return [][]byte{protocol.AppendWatching(nil, id, 7), protocol.AppendData(nil, id, protocol.FrameOutput, []byte("ab")),
				protocol.AppendLost(nil, id, 5), protocol.AppendData(nil, id, protocol.FrameOutput, []byte("c")),
				protocol.AppendExit(nil, id, protocol.Exit{Code: 3})}
		}, Watched{Exited: true, Code: 3}, false},
		{"refused", func(id string) [][]byte {
			return [][]byte{protocol.AppendError(nil, id, "watching is reading")}
		}, Watched{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, events strings.Builder
			lost := func(n int64) { events.WriteString(out.String() + "|lost " + string(rune('0'+n)) + "|") }
			call := startControl(t, func() (Watched, error) {
				return Watch(context.Background(), WatchOptions{Dir: f.dir, Session: "sh1", Raw: true, Stdout: &out, Lost: lost})
			})
			c := f.next()
			raw, err := json.Marshal(c.Control)
			require.NoError(t, err)
			require.Equal(t, `{"id":"`+c.ID+`","reply":"`+c.Reply+`","op":"watch","session":"sh1","raw":true}`, string(raw))
			w := f.openReply(c)
			for _, fr := range tc.frames(c.ID) {
				_, err := w.Write(fr)
				require.NoError(t, err)
			}
			w.Close()
			got, err := call.wait(t)
			if tc.err {
				var rej *RejectedError
				require.True(t, errors.As(err, &rej), "%v", err)
				require.Equal(t, "watching is reading", rej.Msg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, "abc", out.String())
			require.Equal(t, "ab|lost 5|", events.String())
		})
	}
	requireNoReplies(t, f.dir)
}

// TestWatchWritesNothing: nothing is written for a session a sessions
// agent does not list, nor without a session to it, nor for a session of
// a stream agent, nor to a stream agent that serves no control FIFO.
func TestWatchWritesNothing(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	f.openSession("sh1")
	for _, tc := range []struct {
		mode, session string
		want          error
	}{
		{status.ModeSessions, "", ErrNoChild},
		{status.ModeSessions, "none", ErrNoSession},
		{"stream", "sh1", ErrNotSessions},
		{"stream", "", ErrNoChild},
		{"exec", "", ErrNoChild},
	} {
		f.mode = tc.mode
		f.writeStatus()
		_, err := Watch(context.Background(), WatchOptions{Dir: f.dir, Session: tc.session, Stdout: &strings.Builder{}})
		require.ErrorIs(t, err, tc.want, "%s mode, session %q", tc.mode, tc.session)
	}
	f.requireNothingRead()
	requireNoReplies(t, f.dir)
}
