//go:build linux

package conversation

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/sharedir"
)

// The unit harness: a conversation on temporary FIFOs, as the stream
// engine runs it, with a fake child the test drives. What the
// conversation writes to the child arrives on the child's inputs, its
// interrupts on interrupts; the test writes the child's output with
// Output, as the stream's copy does. Asks are spoken on the wire by
// askers that make their own reply FIFOs, as `fifobridge ask` does.

// fakeChild is the stream engine's side, for tests. It takes every other
// input at once (WriteTurnNow) and refuses the others, which go through
// the writer goroutine (WriteTurn): both ways are taken in every test of
// more than one turn.
type fakeChild struct {
	inputs     chan string
	interrupts chan struct{}
	nows       atomic.Int64 // calls of WriteTurnNow
}

func newFakeChild() *fakeChild {
	return &fakeChild{inputs: make(chan string, 2*MaxQueued), interrupts: make(chan struct{}, 64)}
}

func (f *fakeChild) WriteTurn(p []byte) error { f.inputs <- string(p); return nil }
func (f *fakeChild) Interrupt()               { f.interrupts <- struct{}{} }

func (f *fakeChild) WriteTurnNow(p []byte) bool {
	if f.nows.Add(1)%2 == 0 {
		return false
	}
	select {
	case f.inputs <- string(p):
		return true
	default:
		return false
	}
}

// harness is a conversation and its FIFOs.
type harness struct {
	t      *testing.T
	c      *Conversation
	child  *fakeChild
	dir    string
	asks   *os.File // writes ask lines
	cancel context.CancelFunc
	stops  sync.Once
}

// testPrompt is the fake child's prompt.
const testPrompt = "> "

// newHarness runs a conversation with prompt "^> $" whose child has
// started (busy until its first prompt). It checks, when the test ends,
// that the conversation let go of every descriptor and goroutine.
func newHarness(t *testing.T, tune func(*Config)) *harness {
	t.Helper()
	leakcheck.Check(t)
	dir := t.TempDir()
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, AskName), 0o600))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, "out"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "replies"), 0o700))
	fifos, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	replies, err := sharedir.Open(filepath.Join(dir, "replies"), false)
	require.NoError(t, err)
	sink, err := fifo.OpenSinkAt(fifos, "out")
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg := &Config{Prompt: regexp.MustCompile(`^> $`), StopTimeout: 300 * time.Millisecond, MaxRequest: 1 << 20,
		Dir: fifos, Replies: replies, Log: log}
	if tune != nil {
		tune(cfg)
	}
	h := &harness{t: t, child: newFakeChild(), dir: dir}
	h.c = New(cfg, h.child, sink)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.c.Start(ctx)
	h.c.Started()
	h.asks = openAsks(t, filepath.Join(dir, AskName))
	t.Cleanup(func() {
		h.stop()
		h.asks.Close()
		fifos.Close()
		replies.Close()
	})
	return h
}

// openAsks opens the ask FIFO at path for writing, once the conversation
// reads it: at once, unless a test removed it (the conversation's
// follower makes it again after a second, with Create); within 10 s.
func openAsks(t *testing.T, path string) *os.File {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w, err := fifo.OpenWriterNow(path)
		if err == nil || !errors.Is(err, os.ErrNotExist) && !errors.Is(err, fifo.ErrNoReader) {
			require.NoError(t, err)
			return w
		}
		if time.Now().After(deadline) {
			t.Fatalf("the conversation does not read %s: %v", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop stops the conversation as the stream does at a stop of the agent,
// and waits for it, at most 10 s.
func (h *harness) stop() {
	h.stops.Do(func() {
		h.cancel()
		h.c.Exited(child.Signaled(syscall.SIGTERM), true)
		h.c.Stop()
		h.c.script.sink.Close()
		waited := make(chan struct{})
		go func() { h.c.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			h.t.Fatal("the conversation did not end within 10 s of its stop")
		}
	})
}

// out is the child writing s.
func (h *harness) out(s string) { h.c.Output([]byte(s)) }

// input waits for the next input written to the child.
func (h *harness) input() string {
	h.t.Helper()
	select {
	case in := <-h.child.inputs:
		return in
	case <-time.After(10 * time.Second):
		h.t.Fatal("no input reached the child")
		return ""
	}
}

// noInput fails if input reaches the child within d.
func (h *harness) noInput(d time.Duration) {
	h.t.Helper()
	select {
	case in := <-h.child.inputs:
		h.t.Fatalf("input reached the child: %q", in)
	case <-time.After(d):
	}
}

// interrupted waits for an interrupt of the child.
func (h *harness) interrupted() {
	h.t.Helper()
	select {
	case <-h.child.interrupts:
	case <-time.After(10 * time.Second):
		h.t.Fatal("the child was not interrupted")
	}
}

// client is an asker of the conversation: its reply FIFO, whose read end
// it holds while its ask waits, and a write end of its own so that the
// read end sees no end of file before the conversation opens the FIFO.
type client struct {
	t      *testing.T
	id     string
	path   string
	r      *os.File
	keep   *os.File
	frames *bufio.Reader
}

// newClient makes the reply FIFO of ask id.
func (h *harness) newClient(id string) *client {
	h.t.Helper()
	path := filepath.Join(h.dir, "replies", id)
	require.NoError(h.t, unix.Mkfifo(path, 0o600))
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(h.t, err)
	keep, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	require.NoError(h.t, err)
	a := &client{t: h.t, id: id, path: path, r: r, keep: keep, frames: bufio.NewReader(r)}
	h.t.Cleanup(a.leave)
	return a
}

// send sends the ask of a: its input, and more fields of the line.
func (h *harness) send(a *client, input string, more map[string]string) {
	h.t.Helper()
	line := map[string]string{"id": a.id, "reply": a.id, "input": input}
	for k, v := range more {
		line[k] = v
	}
	b, err := json.Marshal(line)
	require.NoError(h.t, err)
	h.asks.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err = h.asks.Write(append(b, '\n'))
	require.NoError(h.t, err)
}

// ask makes a client and sends its ask.
func (h *harness) ask(id, input string, more map[string]string) *client {
	h.t.Helper()
	a := h.newClient(id)
	h.send(a, input, more)
	return a
}

// leave is the asker going away: both ends closed, the FIFO removed.
func (a *client) leave() {
	a.r.Close()
	if a.keep != nil {
		a.keep.Close()
		a.keep = nil
	}
	os.Remove(a.path)
}

// frame is one frame of an ask.
type frame struct {
	ID       string  `json:"id"`
	Type     string  `json:"type"`
	Data     *string `json:"data"`
	DataB64  []byte  `json:"data_b64"`
	Error    string  `json:"error"`
	TimedOut bool    `json:"timed_out"`
	Queued   bool    `json:"queued"`
	Ready    bool    `json:"ready"`
	Code     *int    `json:"code"`
	// How a turn ended: an incomplete input, the prompt's groups and
	// status, a child not ready.
	Incomplete bool              `json:"incomplete"`
	Status     *int              `json:"status"`
	Prompt     map[string]string `json:"prompt"`
	NotReady   string            `json:"not_ready"`
	DurationMS *int64            `json:"duration_ms"`
	line       string
}

// next reads the asker's next frame, within 10 s.
func (a *client) next() frame {
	a.t.Helper()
	a.r.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := a.frames.ReadString('\n')
	require.NoError(a.t, err, "ask %s: a frame", a.id)
	var f frame
	require.NoError(a.t, json.Unmarshal([]byte(line), &f), "ask %s: %q", a.id, line)
	require.Equal(a.t, a.id, f.ID, "a frame of another ask: %q", line)
	f.line = line
	return f
}

// result reads the asker's frames until its last one.
func (a *client) result() (string, frame) {
	a.t.Helper()
	var b strings.Builder
	for {
		f := a.next()
		switch f.Type {
		case "answer":
			if f.Data != nil {
				b.WriteString(*f.Data)
			} else {
				b.Write(f.DataB64)
			}
		case "end", "exit", "error":
			return b.String(), f
		default:
			a.t.Fatalf("ask %s: a frame of unknown type: %q", a.id, f.line)
		}
	}
}

// requireAnswer fails unless the ask ends at a prompt with want.
func (a *client) requireAnswer(want string) {
	a.t.Helper()
	got, last := a.result()
	require.Equal(a.t, want, got, "ask %s: its answer", a.id)
	require.True(a.t, last.Type == "end" && last.Ready, "ask %s: last frame %s", a.id, last.line)
}

// requireLast fails unless the ask's next frame is its last, of type typ,
// with nothing before it.
func (a *client) requireLast(typ string) frame {
	a.t.Helper()
	f := a.next()
	require.Equal(a.t, typ, f.Type, "ask %s: frame %s", a.id, f.line)
	return f
}

// waitFor waits until cond holds of the conversation's status.
func (h *harness) waitFor(what string, cond func(queued int, state string) bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := h.c.Snapshot()
		if cond(st.Queued, st.State) {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the conversation never showed %s: %+v", what, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitReady waits until the child is ready.
func (h *harness) waitReady() {
	h.t.Helper()
	h.waitFor("a ready child", func(_ int, state string) bool { return state == "ready" })
}

// waitQueued waits until n asks wait.
func (h *harness) waitQueued(n int) {
	h.t.Helper()
	h.waitFor(fmt.Sprintf("%d asks waiting", n), func(queued int, _ string) bool { return queued == n })
}

// waitHeld waits until the child's output is held up for an asker.
func (h *harness) waitHeld() {
	h.t.Helper()
	h.waitFor("the output held up", func(int, string) bool {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return h.c.child.clock.held()
	})
}

// ready makes the child show its prompt and waits until it is ready.
func (h *harness) ready() {
	h.t.Helper()
	h.out(testPrompt)
	h.waitReady()
}

// nth names the n-th of many asks.
func nth(prefix string, n int) string { return fmt.Sprintf("%s%d", prefix, n) }
