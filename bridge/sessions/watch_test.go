//go:build linux

package sessions

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/protocol"
)

// watch sends a watch line for session name and returns its reply, read
// up to the watching frame.
func (h *harness) watch(name string, raw bool) *bufio.Reader {
	h.t.Helper()
	reply, r, _ := h.replyFIFO()
	h.line(map[string]any{"op": "watch", "session": name, "id": "w-" + reply[:6], "reply": reply, "raw": raw})
	f := readFrame(h.t, r)
	require.Equal(h.t, protocol.FrameWatching, f.typ(), "%v", f)
	return r
}

// line writes the control line c as it is.
func (h *harness) line(c map[string]any) {
	h.t.Helper()
	b, err := json.Marshal(c)
	require.NoError(h.t, err)
	h.write(string(b) + "\n")
}

// typeIn writes text into session name's input FIFO.
func (h *harness) typeIn(name, text string) {
	h.t.Helper()
	w, err := os.OpenFile(h.sessionPath(name, "in"), os.O_WRONLY|unix.O_NONBLOCK, 0)
	require.NoError(h.t, err)
	defer w.Close()
	_, err = w.Write([]byte(text))
	require.NoError(h.t, err)
}

// watched reads output frames until their text holds want, and returns
// it; a frame of any other type fails.
func watched(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	var got strings.Builder
	for !strings.Contains(got.String(), want) {
		f := readFrame(t, r)
		require.Equal(t, protocol.FrameOutput, f.typ(), "%v after %q", f, got.String())
		got.WriteString(frameData(t, f))
	}
	return got.String()
}

func frameData(t *testing.T, f frame) string {
	if s, ok := f["data_b64"].(string); ok {
		b, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err)
		return string(b)
	}
	s, _ := f["data"].(string)
	return s
}

// Two watchers of a session get what its child writes from then on, each
// its own copy; they end with the session's close (a closed frame, code
// 0), and a watch of its next session ends with that child's exit (an
// exit frame with its status).
func TestSessionsWatchEnds(t *testing.T) {
	h := startHarness(t, promptShell, nil)
	require.Equal(t, protocol.FrameOpened, h.open("w", nil).typ())
	one, two := h.watch("w", false), h.watch("w", false)
	h.typeIn("w", "echo hello\n")
	require.Contains(t, watched(t, one, "hello\n> "), "hello\n> ")
	require.Contains(t, watched(t, two, "hello\n> "), "hello\n> ")
	require.Equal(t, protocol.FrameClosed, h.close("w").typ())
	for _, r := range []*bufio.Reader{one, two} {
		f := readFrame(t, r)
		require.Equal(t, protocol.FrameClosed, f.typ(), "%v", f)
		require.Equal(t, 0, f.num("code"))
	}

	require.Equal(t, protocol.FrameOpened, h.open("x", nil).typ())
	r := h.watch("x", false)
	h.typeIn("x", "echo bye; exit 3\n")
	require.Equal(t, "bye\n", watched(t, r, "bye\n"))
	f := readFrame(t, r)
	require.Equal(t, protocol.FrameExit, f.typ(), "%v", f)
	require.Equal(t, 3, f.num("code"))

	for _, c := range []map[string]any{
		{"op": "watch", "session": "none"},
		{"op": "watch"},
	} {
		require.Equal(t, protocol.FrameError, h.do(c).typ(), "%v", c)
	}
}

// A watcher that never reads loses what does not fit, and is told how
// much once it reads again: what it got and what it lost are all the
// child wrote. Another, reading, is not held up by it, nor is the child.
func TestSessionsWatchLost(t *testing.T) {
	h := startHarness(t, promptShell, nil)
	require.Equal(t, protocol.FrameOpened, h.open("w", nil).typ())
	out, err := os.OpenFile(h.sessionPath("w", "out"), os.O_RDONLY, 0)
	require.NoError(t, err)
	defer out.Close()
	stuck := h.watch("w", false)
	reading := h.watch("w", false)
	const n = 4 << 20
	total := n + len("> ")
	counts := make(chan [2]int, 1)
	go func() { counts <- readAll(t, reading, total) }()
	h.typeIn("w", "head -c 4194304 /dev/zero | tr '\\0' x\n")
	// Once the output FIFO has had every byte, every byte was offered
	// to the watchers (the copy offers a chunk before it writes it).
	got, err := io.ReadFull(out, make([]byte, total))
	require.NoError(t, err, "the output FIFO had %d bytes", got)
	c := readAll(t, stuck, total)
	require.NotZero(t, c[1], "the watcher that did not read lost nothing")
	require.LessOrEqual(t, c[0], 1<<20+1<<17, "more than the agent may hold for a watcher, and its FIFO, reached it")
	r := <-counts
	require.Equal(t, total, r[0]+r[1])
}

// readAll reads frames until output and lost bytes add up to total, and
// returns both counts.
func readAll(t *testing.T, r *bufio.Reader, total int) [2]int {
	var c [2]int
	for c[0]+c[1] < total {
		f := readFrame(t, r)
		switch f.typ() {
		case protocol.FrameOutput:
			c[0] += len(frameData(t, f))
		case protocol.FrameLost:
			c[1] += f.num("bytes")
		default:
			t.Errorf("frame %v after %v", f, c)
			return c
		}
	}
	return c
}

// On a terminal a watch gets the output cleaned as an ask's answer is,
// and with raw as written.
func TestSessionsWatchTerminal(t *testing.T) {
	h := startHarness(t, promptShell, nil)
	require.Equal(t, protocol.FrameOpened, h.open("t", map[string]any{"tty": true}).typ())
	clean, raw := h.watch("t", false), h.watch("t", true)
	h.typeIn("t", `printf '\033[1mbold\033[0m\n'`+"\n")
	got := watched(t, clean, "bold\n> ")
	require.NotContains(t, got, "\x1b")
	require.NotContains(t, got, "\r\n")
	require.Contains(t, watched(t, raw, "\x1b[1mbold\x1b[0m\r\n"), "\x1b[1mbold\x1b[0m\r\n")
}

// Watching is reading: the watch of a user whom the session's output
// FIFO (0640, the agent's) does not let read it is refused, and its reply
// FIFO gets one error frame and nothing of the output.
func TestSessionsWatchRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a reply FIFO to another user")
	}
	h := startHarness(t, promptShell, nil)
	require.Equal(t, protocol.FrameOpened, h.open("w", nil).typ())
	path := filepath.Join(h.dir, "replies", "stranger")
	require.NoError(t, unix.Mkfifo(path, 0o600))
	require.NoError(t, os.Chown(path, 2001, 2001))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	h.line(map[string]any{"op": "watch", "session": "w", "id": "s1", "reply": "stranger"})
	r := bufio.NewReader(f)
	e := readFrame(t, r)
	require.Equal(t, protocol.FrameError, e.typ(), "%v", e)
	require.Contains(t, e["error"], "watching is reading")
	h.typeIn("w", "echo secret\n")
	require.Equal(t, protocol.FrameClosed, h.close("w").typ()) // nothing of w writes after its close
	n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
	require.NoError(t, err)
	require.Zero(t, n+r.Buffered(), "bytes after the error frame")
}
