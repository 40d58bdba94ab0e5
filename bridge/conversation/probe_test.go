//go:build linux

package conversation

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/readwait"
)

// fakeReader is the stream engine's Reader, for tests: it answers as
// answer says, and counts its calls. With a gate, each call first says it
// began on probing and waits for its answer on gate.
type fakeReader struct {
	calls   atomic.Int64
	answer  func() (bool, error)
	probing chan struct{}
	gate    chan bool
}

func (f *fakeReader) Blocked() (bool, error) {
	f.calls.Add(1)
	if f.gate != nil {
		f.probing <- struct{}{}
		return <-f.gate, nil
	}
	return f.answer()
}

func always(blocked bool) *fakeReader {
	return &fakeReader{answer: func() (bool, error) { return blocked, nil }}
}

// probing waits until the gated reader f is asked.
func (f *fakeReader) wait(t *testing.T) {
	t.Helper()
	select {
	case <-f.probing:
	case <-time.After(10 * time.Second):
		t.Fatal("the reader was not asked")
	}
}

// withReader is a harness whose child, with -settle an hour, has r as its
// Reader: only r can make it ready.
func withReader(t *testing.T, r Reader, tune func(*Config)) *harness {
	h := newHarness(t, func(c *Config) {
		c.Settle = time.Hour
		if tune != nil {
			tune(c)
		}
	})
	h.c.Reading(r)
	return h
}

// A child seen waiting for input at its prompt is ready at once, however
// long -settle is: the turn ends as soon as the prompt is shown.
func TestReaderEndsTurn(t *testing.T) {
	r := always(true)
	h := withReader(t, r, nil)
	h.ready()
	a := h.ask("a", "6*7", nil)
	require.Equal(t, "6*7\n", h.input())
	h.out("42\n" + testPrompt)
	got, last := a.result()
	require.Equal(t, "42\n", got)
	require.True(t, last.Type == "end" && last.Ready, last.line)
	require.NotNil(t, last.DurationMS, last.line)
	require.Less(t, *last.DurationMS, int64(5000), "the turn waited for -settle: %s", last.line)
	require.Positive(t, r.calls.Load())
}

// A child not yet seen waiting is probed again, on readwait.NextProbe's
// schedule, until it is; only then does the turn end.
func TestReaderNotYet(t *testing.T) {
	var blocked atomic.Bool
	r := &fakeReader{answer: func() (bool, error) { return blocked.Load(), nil }}
	h := withReader(t, always(true), nil)
	h.ready()
	h.c.Reading(r)
	a := h.ask("a", "go", nil)
	require.Equal(t, "go\n", h.input())
	h.out("went\n" + testPrompt)
	deadline := time.Now().Add(10 * time.Second)
	for r.calls.Load() < 3 {
		require.True(t, time.Now().Before(deadline), "the reader was asked %d times", r.calls.Load())
		time.Sleep(time.Millisecond)
	}
	st, _ := h.c.Snapshot()
	require.Equal(t, "busy", st.State, "the turn ended before the child was seen waiting")
	blocked.Store(true)
	a.requireAnswer("went\n")
}

// Output that comes while the reader is asked cancels its answer: the
// turn ends only at a prompt the child shows after all its output.
func TestReaderOutputCancels(t *testing.T) {
	r := &fakeReader{probing: make(chan struct{}), gate: make(chan bool)}
	h := withReader(t, always(true), nil)
	h.ready()
	h.c.Reading(r)
	a := h.ask("a", "go", nil)
	require.Equal(t, "go\n", h.input())
	h.out("partial\n" + testPrompt)
	r.wait(t)
	h.out("more\n") // the prompt-like line was not the child's last
	r.gate <- true  // seen waiting, but before "more"
	h.out(testPrompt)
	r.wait(t)
	r.gate <- true
	a.requireAnswer("partial\n" + testPrompt + "more\n")

	// A prompt-like line again, while the reader is asked: the answer
	// is for the first one, and the second is probed anew.
	b := h.ask("b", "again", nil)
	require.Equal(t, "again\n", h.input())
	h.out("one\n" + testPrompt)
	r.wait(t)
	h.out("two\n" + testPrompt)
	r.gate <- true
	r.wait(t)
	r.gate <- true
	b.requireAnswer("one\n" + testPrompt + "two\n")
}

// A typed input or a new turn while the reader is asked cancels its
// answer too: the child is busy again.
func TestReaderTypedCancels(t *testing.T) {
	r := &fakeReader{probing: make(chan struct{}), gate: make(chan bool)}
	h := withReader(t, r, nil)
	h.out(testPrompt)
	r.wait(t)
	h.c.Typed() // bytes of DIR/in went to the child
	r.gate <- true
	h.out("typed\n" + testPrompt)
	r.wait(t)
	r.gate <- true
	h.waitReady()
}

// countingHandler counts the log records whose message holds a string.
type countingHandler struct {
	slog.Handler
	want string
	n    *atomic.Int64
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.want) {
		h.n.Add(1)
	}
	return nil
}

// A reader that cannot see leaves the prompt to -settle: it is asked once
// per prompt, and said so once per child in the log.
func TestReaderCannotSee(t *testing.T) {
	var logged atomic.Int64
	r := &fakeReader{answer: func() (bool, error) {
		return false, fmt.Errorf("probe: %w", readwait.ErrCannotSee)
	}}
	h := newHarness(t, func(c *Config) {
		c.Settle = 50 * time.Millisecond
		c.Log = slog.New(countingHandler{Handler: slog.DiscardHandler, want: "cannot see", n: &logged})
	})
	h.c.Reading(r)
	h.ready()
	require.Equal(t, int64(1), r.calls.Load())
	for i := range 3 {
		a := h.ask(nth("a", i), "x", nil)
		require.Equal(t, "x\n", h.input())
		h.out("y\n" + testPrompt)
		a.requireAnswer("y\n")
	}
	require.Equal(t, int64(4), r.calls.Load(), "the reader was asked again after it could not see")
	require.Equal(t, int64(1), logged.Load())
}

// A new child has no reader until it is given one, and the last one's is
// not asked: without, -settle decides.
func TestReaderPerChild(t *testing.T) {
	r := always(true)
	h := withReader(t, r, func(c *Config) { c.Settle = 50 * time.Millisecond })
	h.ready()
	calls := r.calls.Load()
	h.c.Exited(child.ExitStatus{}, false)
	h.c.Started()
	h.ready()
	require.Equal(t, calls, r.calls.Load(), "the reader of the child before was asked")
}
