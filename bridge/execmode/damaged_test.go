//go:build linux

package execmode

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// sealed is the request obj as send writes it (protocol.WireLine).
func sealed(obj string) string { return string(protocol.WireLine([]byte(obj))) }

// replyFIFO makes replies/name and opens it for reading, and a write end
// that keeps its reads from ending before the agent's write end is there,
// as a sender does; both closed when the test ends.
func (g *engine) replyFIFO(name string) *os.File {
	g.t.Helper()
	path := filepath.Join(g.dir, "replies", name)
	require.NoError(g.t, unix.Mkfifo(path, 0o600))
	f, err := openReaderNow(path)
	require.NoError(g.t, err)
	keeper, err := fifo.OpenWriterNow(path)
	require.NoError(g.t, err)
	g.t.Cleanup(func() { keeper.Close(); f.Close() })
	return f
}

// requireNothingRead fails t if f, a reply FIFO's read end, has anything
// to read.
func requireNothingRead(t *testing.T, f *os.File, who string) {
	t.Helper()
	f.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	n, _ := f.Read(make([]byte, 1))
	require.Zero(t, n, "%s got a frame", who)
}

// Issue 26, hole 2: another writer puts bytes between two pieces of a
// victim's 100 KB request line. Whatever it puts there, the victim's
// request does not run, not with the attacker's reply nor with text the
// victim did not send; nothing reaches the victim's reply FIFO, which is
// removed (its send ends at once), and the output FIFO gets an error
// frame under an id of the agent's, not the line's. (A line the attacker
// makes around a later piece is its own request: see protocol/seal.go.)
func TestExecSplicedLinesRefused(t *testing.T) {
	for name, insert := range map[string]string{
		"duplicate reply": `","reply":"att","x":"`,
		"split line":      `\nINJECTED"}` + "\n" + `{"id":"q","reply":"att","stdin":"`,
		"cut line":        "\nINJECTED\n" + `{"id":"q","reply":"att","stdin":"`,
		"pieces as lines": "\n",
	} {
		t.Run(name, func(t *testing.T) {
			g := startEngine(t, "cat", nil)
			out := reader(t, g.out)
			vic, att := g.replyFIFO("vic"), g.replyFIFO("att")
			wire := sealed(`{"id":"victim-id","reply":"vic","stdin":"` + strings.Repeat("s", 100_000) + `"}`)
			at := 3 * protocol.PipeBuf
			g.write(wire[:at] + insert + wire[at:])
			g.write(`{"id":"honest","stdin":"ok"}` + "\n")
			var errs int
			for {
				f := frame(t, out)
				// On the output FIFO (no reply named): never a piece of
				// the victim's stdin, but where the insert frames the
				// victim's later pieces as plain lines of their own,
				// which are taken unsealed (protocol/seal.go: the
				// documented residual of a stalled, spliced intake).
				if name != "pieces as lines" {
					require.NotContains(t, string(f.Bytes()), "sss", "a piece of the victim's stdin ran")
				}
				require.NotContains(t, f.ID, "victim", "the damaged line's id was echoed")
				if f.Type == protocol.FrameError {
					require.ErrorIs(t, errorOf(f), protocol.ErrDamaged)
					errs++
				}
				if f.ID == "honest" && f.Type == protocol.FrameExit {
					break
				}
			}
			require.NotZero(t, errs)
			_, err := os.Lstat(filepath.Join(g.dir, "replies", "vic"))
			require.ErrorIs(t, err, os.ErrNotExist, "the victim's reply FIFO is still there: its send would wait")
			requireNothingRead(t, vic, "the victim's reply FIFO")
			if !strings.Contains(insert, `"reply":"att","stdin"`) {
				// Else the attacker's own line around the victim's later
				// pieces, unsealed, is taken as its request
				// (protocol/seal.go): never with the victim's reply.
				requireNothingRead(t, att, "the attacker's reply FIFO")
			}
		})
	}
}

// errorOf is the error an error frame carries, ErrDamaged when it says so.
func errorOf(f protocol.Frame) error {
	if strings.HasPrefix(f.Error, protocol.ErrDamaged.Error()) {
		return protocol.ErrDamaged
	}
	return nil
}

// A whole sealed line is served as any other, on its reply FIFO.
func TestExecSealedLineServed(t *testing.T) {
	g := startEngine(t, "cat", nil)
	vic := g.replyFIFO("vic")
	g.write(sealed(`{"id":"v","reply":"vic","stdin":"` + strings.Repeat("s", 100_000) + `"}`))
	vic.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReaderSize(vic, 1<<20)
	var got int
	for {
		f := frame(t, r)
		require.Equal(t, "v", f.ID)
		got += len(f.Bytes())
		if f.Type == protocol.FrameExit {
			break
		}
	}
	require.Equal(t, 100_000, got)
}

// A damaged line that names a reply FIFO a running request holds (a
// client that uses one reply FIFO for many requests) leaves it alone: the
// running request goes on and gets its frames.
func TestExecDamagedLineLeavesAHeldReply(t *testing.T) {
	g := startEngine(t, `read x; echo "$x"; exec sleep 30`, nil)
	shared := g.replyFIFO("shared")
	g.write(`{"id":"long","reply":"shared","stdin":"started\n","timeout":"1s"}` + "\n")
	r := bufio.NewReader(shared)
	shared.SetReadDeadline(time.Now().Add(10 * time.Second))
	require.Equal(t, protocol.FrameStart, frame(t, r).Type)
	out := frame(t, r)
	require.Equal(t, "started\n", string(out.Bytes()))
	wire := sealed(`{"id":"other","reply":"shared","stdin":"` + strings.Repeat("s", 10_000) + `"}`)
	g.write(wire[:protocol.PipeBuf] + "\n" + wire[protocol.PipeBuf:])
	require.Eventually(t, func() bool { return g.e.rejected.Load() >= 1 }, 10*time.Second, 5*time.Millisecond)
	_, err := os.Lstat(filepath.Join(g.dir, "replies", "shared"))
	require.NoError(t, err, "the reply FIFO of a running request was removed")
	f := frame(t, r)
	require.Equal(t, protocol.FrameExit, f.Type)
	require.True(t, f.TimedOut, "the running request ended by its time limit, not canceled: %+v", f)
}
