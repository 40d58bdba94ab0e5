//go:build linux

package client

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/protocol"
)

// An end frame's account of the turn reaches the Result: the prompt's
// status and groups, an incomplete input, a child that was not ready, an
// ask that timed out while queued.
func TestAskEndResult(t *testing.T) {
	seven := 7
	r := &relay{id: "a1"}
	for _, tc := range []struct {
		end  protocol.End
		want Result
	}{
		{protocol.End{}, Result{}},
		{protocol.End{Status: &seven, Prompt: []protocol.PromptGroup{{Name: "status", Text: "7"}, {Name: "cwd", Text: "/"}}},
			Result{Status: &seven, Prompt: map[string]string{"status": "7", "cwd": "/"}}},
		{protocol.End{Incomplete: true}, Result{Incomplete: true}},
		{protocol.End{TimedOut: true, NotReady: "no prompt"}, Result{TimedOut: true, NotReady: "no prompt"}},
		{protocol.End{TimedOut: true, Queued: true}, Result{TimedOut: true, Queued: true}},
	} {
		f, ok, err := r.frame(context.Background(), protocol.AppendEnd(nil, "a1", tc.end))
		require.NoError(t, err)
		require.True(t, ok)
		res, done, err := r.handle(context.Background(), f)
		require.NoError(t, err)
		require.True(t, done)
		require.Equal(t, tc.want, res, "end %+v", tc.end)
	}
}

// An ask given up (its context ended) before its turn says Queued: the
// agent took it in and let its reply FIFO go, as it does with an ask
// that waits. One given up in its turn, whose reply FIFO the agent holds,
// or after the agent wrote to it, does not. Ask and an Asker alike.
func TestAskGivenUpWhileQueued(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	a := openAsker(t, dir, nil)
	for _, tc := range []struct {
		name   string
		agent  func(q protocol.ParsedAsk) (done func())
		queued bool
	}{
		{"queued", func(q protocol.ParsedAsk) func() { c.openReply(q).Close(); return func() {} }, true},
		{"in its turn", func(q protocol.ParsedAsk) func() { w := c.openReply(q); return func() { w.Close() } }, false},
		{"answered in part", func(q protocol.ParsedAsk) func() {
			w := c.openReply(q)
			_, err := w.Write(protocol.AppendData(nil, q.ID, protocol.FrameAnswer, []byte("partial\n")))
			require.NoError(t, err)
			// Held open until the ask gave up: an agent that closed it
			// first would race the cancel with "the agent went away".
			return func() { w.Close() }
		}, false},
	} {
		for _, kept := range []bool{false, true} {
			ctx, cancel := context.WithCancel(context.Background())
			var s *call
			if kept {
				s = startTurn(t, ctx, a, Turn{Input: []byte("x")})
			} else {
				s = startCall(t, func(*call) (Result, error) {
					return Ask(ctx, AskOptions{Dir: dir, Input: []byte("x"), Stdout: io.Discard})
				})
			}
			q := c.next()
			done := tc.agent(q)
			cancel()
			s.wait(t)
			done()
			require.ErrorIs(t, s.err, context.Canceled, "%s (kept %v)", tc.name, kept)
			require.Equal(t, tc.queued, s.res.Queued, "%s (kept %v)", tc.name, kept)
			require.True(t, c.replyGone(q), "%s (kept %v): the reply FIFO is given up", tc.name, kept)
		}
	}
	requireNoReplies(t, dir)
}
