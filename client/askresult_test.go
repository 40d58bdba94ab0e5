//go:build linux

package client

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/protocol"
)

// An end frame's account of the turn reaches the Result: the prompt's
// status and groups, an incomplete input, a child that was not ready.
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
