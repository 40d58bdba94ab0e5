//go:build linux

package client

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/protocol"
)

// A frame decodes as encoding/json decodes it; a list's answer keeps its
// sessions as the agent wrote them, in a slice of its own.
func TestDecodeFrame(t *testing.T) {
	sessions := json.RawMessage(`[{"name":"a","pid":1,"turn":{"state":"ready"}},{"name":"b\"}]","pid":2}]`)
	for _, line := range [][]byte{
		protocol.AppendSessions(nil, "l1", sessions),
		protocol.AppendSessions(nil, "l2", nil),
		protocol.AppendData(nil, "r1", protocol.FrameStdout, []byte(`"sessions":[1]`)),
		protocol.AppendExit(nil, "r1", protocol.Exit{Code: 3}),
		protocol.AppendOpened(nil, "o1", 12, true),
	} {
		line = line[:len(line)-1] // the newline
		var want protocol.Frame
		require.NoError(t, json.Unmarshal(line, &want))
		got, err := decodeFrame(line)
		require.NoError(t, err)
		require.Equal(t, want, got, "%s", line)
		if len(got.Sessions) > 0 {
			copy(line, make([]byte, len(line)))
			require.JSONEq(t, string(want.Sessions), string(got.Sessions), "the sessions outlive the line's buffer")
		}
	}
	_, err := decodeFrame([]byte(`{"id":"l","type":"sessions","sessions":[`))
	require.Error(t, err)
}
