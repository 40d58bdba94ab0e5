//go:build linux

package conversation

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
)

// A turn: the input reaches the child with its newline, and the answer is
// what the child writes until its prompt, less the prompt.
func TestTurn(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	a := h.ask("a", "hello", nil)
	require.Equal(t, "hello\n", h.input())
	h.out("hi there\n")
	h.out(testPrompt)
	a.requireAnswer("hi there\n")
	st, script := h.c.Snapshot()
	require.Equal(t, uint64(1), st.Answered)
	require.Zero(t, st.Incomplete)
	require.NotNil(t, script)
}

// Asks waiting behind a long turn hold no descriptor and no goroutine of
// the conversation, and are answered in order, each with its own answer.
func TestWaitingAsksHoldNothing(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	long := h.ask("long", "long", nil)
	require.Equal(t, "long\n", h.input())
	clients := make([]*client, 300)
	for i := range clients {
		clients[i] = h.newClient(nth("q", i))
	}
	fds, goroutines := leakcheck.FDs(t), runtime.NumGoroutine()
	for i, cl := range clients {
		h.send(cl, nth("in", i), nil)
	}
	h.waitQueued(300)
	require.Equal(t, fds, leakcheck.FDs(t), "descriptors held by 300 waiting asks")
	require.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "goroutines held by 300 waiting asks")

	h.out("long done\n" + testPrompt)
	long.requireAnswer("long done\n")
	for i, cl := range clients {
		require.Equal(t, nth("in", i)+"\n", h.input())
		h.out(nth("out", i) + "\n" + testPrompt)
		cl.requireAnswer(nth("out", i) + "\n")
	}
}

// At most MaxQueued asks wait; one more is refused at once.
func TestTooManyAsks(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	h.ask("long", "long", nil)
	require.Equal(t, "long\n", h.input())
	for i := range MaxQueued {
		h.ask(nth("q", i), "never", nil)
	}
	h.waitQueued(MaxQueued)
	one := h.ask("one", "one too many", nil)
	f := one.requireLast("error")
	require.Contains(t, f.Error, "too many asks waiting")
	st, _ := h.c.Snapshot()
	require.Equal(t, MaxQueued, st.Queued)
}

// An ask whose asker went away while it waited is dropped when its turn
// would start, and the child never sees it: one whose FIFO is gone, one
// whose FIFO nobody reads any more.
func TestAskerGoneWhileWaiting(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	long := h.ask("long", "long", nil)
	require.Equal(t, "long\n", h.input())
	removed := h.ask("removed", "removed", nil)
	closed := h.ask("closed", "closed", nil)
	kept := h.ask("kept", "kept", nil)
	h.waitQueued(3)
	removed.leave()
	closed.r.Close()
	closed.keep.Close()
	closed.keep = nil

	h.out(testPrompt)
	long.requireAnswer("")
	require.Equal(t, "kept\n", h.input(), "the next input is the live asker's")
	h.out("mine\n" + testPrompt)
	kept.requireAnswer("mine\n")
}

// An asker that takes nothing loses its turn after the patience: the turn
// is interrupted, the child's output is no longer held up, and the next
// ask is served once the child is ready again.
func TestStalledAsker(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	h.ask("stalled", "big", nil) // never read
	require.Equal(t, "big\n", h.input())
	next := h.ask("next", "next", nil)
	h.waitQueued(1)
	start := time.Now()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		h.out(strings.Repeat("x", 8<<20)) // far more than the FIFO and maxHeld hold
	}()
	h.interrupted()
	require.GreaterOrEqual(t, time.Since(start), h.c.turn.rule.Patience()-100*time.Millisecond, "interrupted before the patience")
	<-wrote // the output is no longer held up
	h.out("^C\n" + testPrompt)
	require.Equal(t, "next\n", h.input())
	h.out("served\n" + testPrompt)
	next.requireAnswer("served\n")
}

// A child that writes faster than its asker reads waits: at most maxHeld
// of the answer waits in the conversation, and the answer arrives whole.
func TestBackpressure(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.StopTimeout = 5 * time.Second })
	h.ready()
	a := h.ask("slow", "big", nil)
	require.Equal(t, "big\n", h.input())
	const size = 16 << 20
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		line := strings.Repeat("y", 1023) + "\n"
		for range size / len(line) {
			h.out(line)
		}
		h.out(testPrompt)
	}()
	// Nobody reads yet: the child's output is held up with at most
	// maxHeld waiting for the asker.
	h.waitHeld()
	select {
	case <-wrote:
		t.Fatal("the child wrote everything to an asker that reads nothing")
	default:
	}
	h.c.mu.Lock()
	held := h.c.turn.cur.held
	h.c.mu.Unlock()
	require.LessOrEqual(t, held, maxHeld)
	require.Greater(t, held, maxHeld/2)

	got, last := a.result()
	require.Equal(t, "end", last.Type, last.line)
	require.Equal(t, size, len(got))
	require.Equal(t, size/1024, strings.Count(got, "\n"))
	<-wrote
}

// While the child's output is held up for an asker, time stands still for
// the tracker: a line that looks like the prompt at the end of what was
// read does not end the turn because the child, kept waiting, is quiet.
func TestHeldOutputIsNotQuiet(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.StopTimeout = 5 * time.Second })
	h.ready()
	heldOutputIsNotQuiet(t, h, func() {})
}

// Nor does a Reader that sees the child waiting for input once its output
// is held up: what the child waits to write is not yet in the
// conversation. (Before, the Reader says no: the child still writes.)
// child waits to write is not yet in the conversation.
func TestHeldOutputIsNotWaiting(t *testing.T) {
	var blocked atomic.Bool
	blocked.Store(true)
	r := &fakeReader{answer: func() (bool, error) { return blocked.Load(), nil }}
	h := withReader(t, r, func(c *Config) { c.StopTimeout = 5 * time.Second })
	h.ready()
	blocked.Store(false)
	heldOutputIsNotQuiet(t, h, func() { blocked.Store(true) })
}

// heldOutputIsNotQuiet holds the output of a turn of h, whose child is
// ready, up with a prompt-like line at the end of what was read, calls
// held, and checks that the turn goes on past that line.
func heldOutputIsNotQuiet(t *testing.T, h *harness, held func()) {
	a := h.ask("a", "go", nil)
	require.Equal(t, "go\n", h.input())
	// Ten pieces fit in maxHeld, the prompt-like line at the end of the
	// last; then there is no room for the next piece.
	first := strings.Repeat("z", 10*piece-3) + "\n" + testPrompt
	more := "more" + strings.Repeat("m", 256<<10) + "\n"
	fed, wrote := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(wrote)
		h.out(first)
		close(fed)
		h.out(more) // held up: no room
		h.out(testPrompt)
	}()
	select {
	case <-fed:
	case <-time.After(10 * time.Second):
		t.Fatal("ten pieces did not fit in what is held for an asker")
	}
	h.waitHeld()
	held()
	time.Sleep(100 * time.Millisecond) // time passing while held up is what the test is about
	got, last := a.result()
	require.Equal(t, "end", last.Type, last.line)
	require.True(t, strings.HasSuffix(got, "\n"+testPrompt+more), "the answer ends with %q", got[max(len(got)-20, 0):])
	<-wrote
}

// An interrupted turn's output never reaches a later answer: the next turn
// starts only once the child shows its prompt again, however long after
// -stop-timeout that is.
func TestInterruptedTurnWaitsForPrompt(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	a := h.ask("a", "sleep", map[string]string{"timeout": "200ms"})
	require.Equal(t, "sleep\n", h.input())
	h.interrupted()
	f := a.requireLast("end")
	require.True(t, f.TimedOut, f.line)
	b := h.ask("b", "new-1", nil)
	h.waitQueued(1)
	h.noInput(3 * h.c.cfg.StopTimeout) // the child ignored the interrupt: no prompt
	h.out("LEAKED-OLD\n")
	h.noInput(3 * h.c.cfg.StopTimeout)
	h.out(testPrompt)
	require.Equal(t, "new-1\n", h.input())
	h.out("new-1\n" + testPrompt)
	b.requireAnswer("new-1\n")
	st, _ := h.c.Snapshot()
	require.Equal(t, uint64(1), st.TimedOut)
}

// On a terminal the interrupt is ^C typed after the turn's input.
func TestTerminalInterrupt(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Terminal = true })
	h.ready()
	a := h.ask("a", "sleep", map[string]string{"timeout": "100ms"})
	require.Equal(t, "sleep\n", h.input())
	require.Equal(t, "\x03", h.input())
	require.True(t, a.requireLast("end").TimedOut)
	require.Empty(t, h.child.interrupts, "no signal on a terminal")
}

// A waiting ask past its time limit gets its end frame (timed out)
// without a turn: the child never sees it.
func TestWaitingAskTimesOut(t *testing.T) {
	h := newHarness(t, nil) // the child never shows its prompt
	a := h.ask("a", "never", map[string]string{"timeout": "200ms"})
	start := time.Now()
	f := a.requireLast("end")
	require.True(t, f.TimedOut, f.line)
	require.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond, "ended before its limit")
	h.noInput(50 * time.Millisecond)
	require.Empty(t, h.child.interrupts, "no turn: nothing to interrupt")
}

// The child ends during a turn: its asker gets an exit frame. Restarted,
// the waiting asks wait for its prompt; not restarted, they are refused,
// and so is every later one.
func TestChildExits(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	a := h.ask("a", "exit", nil)
	require.Equal(t, "exit\n", h.input())
	b := h.ask("b", "after", nil)
	h.waitQueued(1)
	h.out("bye\n")
	h.c.OutputEnded()
	h.c.Exited(child.Signaled(syscall.SIGUSR1), false)
	got, last := a.result()
	require.Equal(t, "bye\n", got)
	require.Equal(t, "exit", last.Type, last.line)
	require.Equal(t, 128+int(syscall.SIGUSR1), *last.Code)

	h.c.Started() // restarted: b waits for its prompt
	h.noInput(50 * time.Millisecond)
	h.out(testPrompt)
	require.Equal(t, "after\n", h.input())
	c := h.ask("c", "never", nil)
	h.waitQueued(1)
	h.c.OutputEnded()
	h.c.Exited(child.ExitStatus{}, true)
	_, last = b.result()
	require.Equal(t, "exit", last.Type, last.line)
	require.Contains(t, c.requireLast("error").Error, "not restarted")
	d := h.ask("d", "later", nil)
	require.Contains(t, d.requireLast("error").Error, "not restarted")
}

// A stop of the agent: the child's output is no longer held up for an
// asker that does not read, the waiting asks get an error frame, and
// nothing waits for that asker past the stop's deadline.
func TestStop(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	h.ask("a", "run", nil) // never read
	require.Equal(t, "run\n", h.input())
	b := h.ask("b", "wait", nil)
	h.waitQueued(1)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		h.out(strings.Repeat("x", 4<<20))
	}()
	h.waitHeld()
	start := time.Now()
	h.cancel() // the agent stops
	select {
	case <-wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("the child's output is still held up for an asker after the stop began")
	}
	h.stop()
	require.Less(t, time.Since(start), h.c.cfg.StopTimeout+time.Second, "the stop waited past its deadline")
	require.Contains(t, b.requireLast("error").Error, "stopping")
}

// Busy says whether an ask waits or is in its turn, for -idle-timeout; the
// end of a turn is activity.
func TestBusy(t *testing.T) {
	var mu sync.Mutex
	active := 0
	h := newHarness(t, func(c *Config) {
		c.Activity = func() { mu.Lock(); active++; mu.Unlock() }
	})
	require.False(t, h.c.Busy())
	a := h.ask("a", "x", nil) // waits: the child is not ready
	h.waitQueued(1)
	require.True(t, h.c.Busy())
	h.out(testPrompt)
	require.Equal(t, "x\n", h.input())
	require.True(t, h.c.Busy())
	h.out(testPrompt)
	a.requireAnswer("")
	require.Eventually(t, func() bool { return !h.c.Busy() }, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 2, active, "accepted, and ended")
}

// A character cut between two reads of the child's output is sent whole,
// as text.
func TestCutCharacter(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	a := h.ask("a", "é", nil)
	require.Equal(t, "é\n", h.input())
	h.out("caf\xc3")
	h.out("\xa9\n" + testPrompt)
	got, last := a.result()
	require.Equal(t, "café\n", got)
	require.Equal(t, "end", last.Type)
}
