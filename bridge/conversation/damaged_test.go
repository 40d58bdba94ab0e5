//go:build linux

package conversation

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/protocol"
)

// Issue 26, hole 2, on DIR/ask: another writer puts bytes between two
// pieces of a victim's 100 KB ask. No frame reaches the victim's reply
// FIFO, which is removed, so that its ask ends at once. Where the insert
// is no line of the attacker's own, the child never sees a byte and the
// next ask is served.
func TestSplicedAsksRefused(t *testing.T) {
	for name, insert := range map[string]string{
		"duplicate reply": `","reply":"att","x":"`,
		"split line":      `\nINJECTED"}` + "\n" + `{"id":"q","reply":"att","input":"`,
		"cut line":        "\nINJECTED\n" + `{"id":"q","reply":"att","input":"`,
		"pieces as lines": "\n",
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.ready()
			vic, att := h.newClient("vic"), h.newClient("att")
			obj, err := json.Marshal(protocol.Ask{ID: "vic", Reply: "vic", Input: strings.Repeat("s", 100_000)})
			require.NoError(t, err)
			wire := string(protocol.WireLine(obj))
			at := 2 * protocol.PipeBuf
			h.asks.SetWriteDeadline(time.Now().Add(10 * time.Second))
			_, err = h.asks.Write([]byte(wire[:at] + insert + wire[at:]))
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				_, err := os.Lstat(vic.path)
				return os.IsNotExist(err)
			}, 10*time.Second, 5*time.Millisecond, "the victim's reply FIFO is still there: its ask would wait")
			vic.r.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			n, _ := vic.r.Read(make([]byte, 1))
			require.Zero(t, n, "the victim's ask got a frame")
			if strings.Contains(insert, `"reply":"att","input"`) {
				// The attacker's own line around the victim's later
				// pieces: unsealed, it is taken as an ask of its own
				// (protocol/seal.go), and never names the victim.
				return
			}
			h.noInput(100 * time.Millisecond)
			att.r.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			n, _ = att.r.Read(make([]byte, 1))
			require.Zero(t, n, "the attacker's ask got a frame")
			a := h.ask("honest", "hello", nil)
			require.Equal(t, "hello\n", h.input())
			h.out("hi\n" + testPrompt)
			a.requireAnswer("hi\n")
		})
	}
}
