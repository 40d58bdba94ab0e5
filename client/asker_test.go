//go:build linux

package client

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// startTurn runs a.Ask for t on a goroutine the test waits for; its
// answer goes to the call's stdout unless t.Stdout is set.
func startTurn(tt *testing.T, ctx context.Context, a *Asker, t Turn) *call {
	tt.Helper()
	return startCall(tt, func(c *call) (Result, error) {
		if t.Stdout == nil {
			t.Stdout = &c.stdout
		}
		return a.Ask(ctx, t)
	})
}

// openAsker opens an Asker of dir, closed when the test ends, whose
// warnings are collected in *warnings.
func openAsker(t *testing.T, dir string, warnings *[]string) *Asker {
	t.Helper()
	o := AskerOptions{}
	if warnings != nil {
		o.Warn = func(msg string) { *warnings = append(*warnings, msg) }
	}
	a, err := OpenAsker(dir, o)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a
}

// One Asker asks many turns through one reply FIFO and one DIR/ask kept
// open: each turn is one line with its own id, the same reply name, its
// input, limit and quiet; its answer is its own; the Asker keeps no more
// descriptors from turn to turn (this fake agent closes its write end
// after every turn, so each turn after the first reads an end of file
// before its first frame, and stands in for the agent's write end again
// until that frame); Close removes the reply FIFO.
func TestAskerManyTurns(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	var warnings []string
	a := openAsker(t, dir, &warnings)
	fds := leakcheck.FDs(t)
	var reply string
	ids := map[string]bool{}
	for i := range 50 {
		s := startTurn(t, context.Background(), a, Turn{Input: []byte(fmt.Sprintf("q%d", i)), Limit: 5 * time.Second, Quiet: time.Second})
		q := c.next()
		require.Equal(t, fmt.Sprintf("q%d", i), q.Input)
		require.Equal(t, 5*time.Second, q.Limit)
		require.Equal(t, time.Second, q.Quiet)
		require.Len(t, q.ID, 32, "ask id: 128 bits in hex")
		require.False(t, ids[q.ID], "ids are not reused")
		ids[q.ID] = true
		if reply == "" {
			reply = q.Reply
			require.Len(t, reply, 32, "reply name: 128 bits in hex")
		}
		require.Equal(t, reply, q.Reply, "turn %d: one reply FIFO for every turn", i)
		c.answer(q, fmt.Sprintf("a%d\n", i))
		s.wait(t)
		require.NoError(t, s.err)
		require.Equal(t, Result{}, s.res)
		require.Equal(t, fmt.Sprintf("a%d\n", i), s.stdout.String())
		if i == 0 {
			// The keeper went at the first frame: the agent's write end
			// stands in for it.
			require.Equal(t, fds-1, leakcheck.FDs(t), "turn 0: descriptors")
			fds--
		}
		require.Equal(t, fds, leakcheck.FDs(t), "turn %d: descriptors", i)
	}
	require.Empty(t, warnings)
	fi, err := os.Stat(filepath.Join(dir, "replies", reply))
	require.NoError(t, err)
	require.Equal(t, os.ModeNamedPipe|0o600, fi.Mode(), "the agent is this user: 0600")
	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "Close twice does nothing")
	requireNoReplies(t, dir)
	_, err = a.Ask(context.Background(), Turn{Input: []byte("late")})
	require.ErrorIs(t, err, ErrClosed)
}

// Frames of another id on the private reply FIFO are reported and
// skipped, as Ask does; the turn's own frames, the end frame's verdict and
// the child's exit come through.
func TestAskerFrames(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	var warnings []string
	a := openAsker(t, dir, &warnings)

	s := startTurn(t, context.Background(), a, Turn{Input: []byte("slow")})
	q := c.next()
	w := c.openReply(q)
	var b []byte
	b = protocol.AppendData(b, "evil", protocol.FrameAnswer, []byte("forged\n"))
	b = protocol.AppendEnd(b, "evil", protocol.End{})
	b = append(b, "not a frame\n"...)
	b = protocol.AppendData(b, q.ID, protocol.FrameAnswer, []byte("own\n"))
	b = protocol.AppendEnd(b, q.ID, protocol.End{TimedOut: true})
	_, err := w.Write(b)
	require.NoError(t, err)
	w.Close()
	s.wait(t)
	require.NoError(t, s.err)
	require.True(t, s.res.TimedOut)
	require.Equal(t, "own\n", s.stdout.String())
	require.Len(t, warnings, 2, "one for id evil, one for the line: %q", warnings)
	require.Contains(t, warnings[0], `"evil"`)

	s = startTurn(t, context.Background(), a, Turn{Input: []byte("exit(3)")})
	q2 := c.next()
	require.Equal(t, q.Reply, q2.Reply, "a turn that ended with its frame keeps the FIFO")
	w = c.openReply(q2)
	w.Write(protocol.AppendExit(nil, q2.ID, protocol.Exit{Code: 3}))
	w.Close()
	s.wait(t)
	require.NoError(t, s.err)
	require.Equal(t, Result{Code: 3, Exited: true}, s.res)

	s = startTurn(t, context.Background(), a, Turn{Input: []byte("x")})
	q3 := c.next()
	require.Equal(t, q.Reply, q3.Reply)
	w = c.openReply(q3)
	w.Write(protocol.AppendError(nil, q3.ID, "too many asks waiting"))
	w.Close()
	var rej *RejectedError
	require.ErrorAs(t, s.wait(t).err, &rej)
	require.Equal(t, "too many asks waiting", rej.Msg)

	s = startTurn(t, context.Background(), a, Turn{Input: []byte("after")})
	q4 := c.next()
	require.Equal(t, q.Reply, q4.Reply, "an error frame ends a turn cleanly too")
	c.answer(q4, "ok\n")
	require.NoError(t, s.wait(t).err)
	require.Equal(t, "ok\n", s.stdout.String())
}

// A turn whose context ends gives its reply FIFO up, which is how the
// agent learns to interrupt it; the next turn makes a new one. So does a
// turn whose agent closed the reply FIFO before the end frame.
func TestAskerGivesUp(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	a := openAsker(t, dir, nil)

	ctx, cancel := context.WithCancel(context.Background())
	s := startTurn(t, ctx, a, Turn{Input: []byte("while True: pass")})
	q := c.next()
	w := c.openReply(q) // the turn runs
	w.Write(protocol.AppendData(nil, q.ID, protocol.FrameAnswer, []byte("partial\n")))
	cancel()
	require.ErrorIs(t, s.wait(t).err, context.Canceled)
	require.True(t, c.replyGone(q), "the reply FIFO is given up")
	w.Close()
	requireNoReplies(t, dir)

	s = startTurn(t, context.Background(), a, Turn{Input: []byte("next")})
	q2 := c.next()
	require.NotEqual(t, q.Reply, q2.Reply, "a new reply FIFO")
	w = c.openReply(q2)
	w.Write(protocol.AppendData(nil, q2.ID, protocol.FrameAnswer, []byte("half\n")))
	w.Close() // the agent died halfway
	require.ErrorIs(t, s.wait(t).err, ErrAgentGone)
	require.True(t, c.replyGone(q2))

	s = startTurn(t, context.Background(), a, Turn{Input: []byte("again")})
	q3 := c.next()
	require.NotEqual(t, q2.Reply, q3.Reply)
	c.answer(q3, "fine\n")
	require.NoError(t, s.wait(t).err)
	require.Equal(t, "fine\n", s.stdout.String())
}

// Close ends a turn under way with ErrClosed, at once, and waits for it.
func TestAskerCloseEndsTurn(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	a, err := OpenAsker(dir, AskerOptions{})
	require.NoError(t, err)
	s := startTurn(t, context.Background(), a, Turn{Input: []byte("never answered")})
	q := c.next()
	require.NoError(t, a.Close())
	require.ErrorIs(t, s.wait(t).err, ErrClosed)
	require.True(t, c.replyGone(q))
	requireNoReplies(t, dir)
}

// Turns asked from several goroutines at once are taken one at a time:
// the second line reaches DIR/ask only once the first turn has ended.
func TestAskerOneTurnAtATime(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	a := openAsker(t, dir, nil)
	s1 := startTurn(t, context.Background(), a, Turn{Input: []byte("one")})
	q1 := c.next()
	s2 := startTurn(t, context.Background(), a, Turn{Input: []byte("two")})
	select {
	case q := <-c.got:
		t.Fatalf("a second line %q while the first turn runs", q.Input)
	case <-time.After(100 * time.Millisecond): // what is tested is that nothing comes
	}
	c.answer(q1, "1\n")
	q2 := c.next()
	c.answer(q2, "2\n")
	require.NoError(t, s1.wait(t).err)
	require.NoError(t, s2.wait(t).err)
	require.Equal(t, "1\n", s1.stdout.String())
	require.Equal(t, "2\n", s2.stdout.String())

	// A turn waiting for its go ends with its context.
	s1 = startTurn(t, context.Background(), a, Turn{Input: []byte("long")})
	q1 = c.next()
	ctx, cancel := context.WithCancel(context.Background())
	s2 = startTurn(t, ctx, a, Turn{Input: []byte("given up")})
	cancel()
	require.ErrorIs(t, s2.wait(t).err, context.Canceled)
	c.answer(q1, "done\n")
	require.NoError(t, s1.wait(t).err)
}

// When the agent that read DIR/ask is gone and a new one serves DIR with
// a new DIR/ask, the next turn opens it again and is answered there.
func TestAskerAgentRestarted(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	a := openAsker(t, dir, nil)
	s := startTurn(t, context.Background(), a, Turn{Input: []byte("1")})
	c.answer(c.next(), "one\n")
	require.NoError(t, s.wait(t).err)

	c.stop()
	require.NoError(t, os.Remove(filepath.Join(dir, askName)))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, askName), 0o600))
	c = startFakeConversation(t, dir)
	s = startTurn(t, context.Background(), a, Turn{Input: []byte("2")})
	q := c.next()
	require.Equal(t, "2", q.Input)
	c.answer(q, "two\n")
	require.NoError(t, s.wait(t).err)
	require.Equal(t, "two\n", s.stdout.String())

	c.stop() // and nobody serves DIR any more
	_, err := a.Ask(context.Background(), Turn{Input: []byte("3")})
	require.ErrorIs(t, err, ErrNoAgent)
}

// A line longer than PipeBuf goes whole, under the lock, and the lock is
// released after it: the descriptor stays open for the next turn.
func TestAskerLongLine(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	a := openAsker(t, dir, nil)
	long := strings.Repeat("x", 3*PipeBuf)
	for range 2 {
		s := startTurn(t, context.Background(), a, Turn{Input: []byte(long)})
		q := c.next()
		require.Equal(t, long, q.Input)
		c.answer(q, "ok\n")
		require.NoError(t, s.wait(t).err)
	}
	other, err := os.OpenFile(filepath.Join(dir, askName), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB), "the Asker holds no lock between turns")
}

// OpenAsker fails as Ask does, and leaves nothing behind: no
// conversation, no agent.
func TestOpenAskerRefused(t *testing.T) {
	checkLeaks(t)
	_, err := OpenAsker(filepath.Join(t.TempDir(), "missing"), AskerOptions{})
	require.ErrorIs(t, err, ErrNoConversation)
	dir := newDir(t) // DIR/in only: no conversation
	_, err = OpenAsker(dir, AskerOptions{})
	require.ErrorIs(t, err, ErrNoConversation)
	dir = newConversationDir(t)
	_, err = OpenAsker(dir, AskerOptions{})
	require.ErrorIs(t, err, ErrNoAgent)
	requireNoReplies(t, dir)
}

// cancelWriter takes a turn's write to Stdout and cancels the turn's
// context right after, on a goroutine of its own: sometimes while the
// turn's end frame, read with the answer, is taken.
type cancelWriter struct{ cancel context.CancelFunc }

func (w cancelWriter) Write(b []byte) (int, error) { go w.cancel(); return len(b), nil }

// A context that ends just as a turn's last frame is taken leaves nothing
// behind on the kept reply FIFO: whether that turn ends with its frame or
// with ctx's error, the next turn is answered.
func TestAskerContextEndsAtLastFrame(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	a := openAsker(t, dir, nil)
	for i := range 100 {
		ctx, cancel := context.WithCancel(context.Background())
		s := startTurn(t, ctx, a, Turn{Input: []byte("q"), Stdout: cancelWriter{cancel}})
		c.answer(c.next(), "a\n") // the answer and the end frame in one write
		s.wait(t)
		cancel()
		s = startTurn(t, context.Background(), a, Turn{Input: []byte("next")})
		c.answer(c.next(), "fine\n")
		require.NoError(t, s.wait(t).err, "try %d", i)
		require.Equal(t, "fine\n", s.stdout.String())
	}
}

// heldWriter holds its first write until release is closed, and counts
// writes under way at once.
type heldWriter struct {
	entered, release chan struct{}
	once             sync.Once
	mu               sync.Mutex
	got              bytes.Buffer
	active, overlap  atomic.Int32
}

func (w *heldWriter) Write(b []byte) (int, error) {
	if w.active.Add(1) > 1 {
		w.overlap.Add(1)
	}
	defer w.active.Add(-1)
	first := false
	w.once.Do(func() { first = true })
	if first {
		close(w.entered)
		<-w.release
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got.Write(b)
}

// A write to Stdout that a turn abandoned (its context ended while the
// write blocked) is waited for before the next turn writes to its Stdout:
// the two never run at once, and the answers keep their order.
func TestAskerAbandonedWriteBeforeNext(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	c := startFakeConversation(t, dir)
	a := openAsker(t, dir, nil)
	w := &heldWriter{entered: make(chan struct{}), release: make(chan struct{})}
	release := sync.OnceFunc(func() { close(w.release) })
	defer release()

	ctx, cancel := context.WithCancel(context.Background())
	s := startTurn(t, ctx, a, Turn{Input: []byte("1"), Stdout: w})
	c.answer(c.next(), "one\n")
	<-w.entered
	cancel()
	require.ErrorIs(t, s.wait(t).err, context.Canceled, "the blocked write is abandoned")

	s = startTurn(t, context.Background(), a, Turn{Input: []byte("2"), Stdout: w})
	c.answer(c.next(), "two\n")
	select {
	case <-s.done:
		t.Fatalf("the turn ended (%v) while the write of the turn before still blocked", s.err)
	case <-time.After(200 * time.Millisecond): // what is tested is that nothing comes
	}
	release()
	require.NoError(t, s.wait(t).err)
	require.Zero(t, w.overlap.Load(), "writes at once")
	require.Equal(t, "one\ntwo\n", w.got.String())
}

// A turn's watch compares the agent that serves DIR when it looks with
// the one whose status file the turn began with: the same agent
// rewriting its file (as it does after every turn) is no new agent;
// another agent's file is, while DIR/ask is still read, and the turn
// ends with ErrAgentGone.
func TestAskerWatchesItsAgent(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	started := time.Now().UTC()
	put := func(pid int) {
		d, err := sharedir.Open(dir, false)
		require.NoError(t, err)
		defer d.Close()
		require.NoError(t, status.WriteAt(d, statusName, status.Status{PID: pid, Mode: "stream", State: "running", StartedAt: started, UpdatedAt: time.Now()}, 0o644))
	}
	put(1)
	c := startFakeConversation(t, dir)
	a := openAsker(t, dir, nil)
	for i := range 2 {
		s := startTurn(t, context.Background(), a, Turn{Input: []byte("1")})
		q := c.next()
		put(1)
		c.answer(q, "one\n")
		require.NoError(t, s.wait(t).err, "turn %d", i)
	}

	s := startTurn(t, context.Background(), a, Turn{Input: []byte("2")})
	c.next()
	put(2)
	require.ErrorIs(t, s.wait(t).err, ErrAgentGone)
}
