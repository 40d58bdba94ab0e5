//go:build linux

package sessions

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/protocol"
)

// TestScope: stream mode's control FIFO takes signal, watch and eof
// naming no session, and nothing else; sessions mode's DIR/in takes
// those only with a session, and open, close and list.
func TestScope(t *testing.T) {
	for _, c := range []struct {
		mode, op, session string
		all               bool
		ok                bool
	}{
		{"stream", protocol.OpSignal, "", false, true},
		{"stream", protocol.OpWatch, "", false, true},
		{"stream", protocol.OpEOF, "", false, true},
		{"stream", protocol.OpSignal, "sh1", false, false},
		{"stream", protocol.OpEOF, "sh1", false, false},
		{"stream", protocol.OpOpen, "sh1", false, false},
		{"stream", protocol.OpClose, "", true, false},
		{"stream", protocol.OpList, "", false, false},
		{"sessions", protocol.OpSignal, "sh1", false, true},
		{"sessions", protocol.OpEOF, "sh1", false, true},
		{"sessions", protocol.OpWatch, "sh1", false, true},
		{"sessions", protocol.OpSignal, "", false, false},
		{"sessions", protocol.OpEOF, "", false, false},
		{"sessions", protocol.OpWatch, "", false, false},
		{"sessions", protocol.OpOpen, "sh1", false, true},
		{"sessions", protocol.OpClose, "", true, true},
		{"sessions", protocol.OpList, "", false, true},
	} {
		tb := &Table{cfg: &Config{Run: &config.Run{Mode: c.mode}}}
		ctl := protocol.ParsedControl{Control: protocol.Control{Op: c.op, Session: c.session, All: c.all}}
		err := tb.scope(ctl)
		if c.ok {
			require.NoError(t, err, "%s mode, op %s, session %q", c.mode, c.op, c.session)
		} else {
			require.Error(t, err, "%s mode, op %s, session %q", c.mode, c.op, c.session)
		}
	}
}
