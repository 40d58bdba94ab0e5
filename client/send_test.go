//go:build linux

package client

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/protocol"
)

// call is a call of Send or of an Asker's Ask running on its own
// goroutine, which the test waits for.
type call struct {
	stdout, stderr bytes.Buffer
	warnings       []string
	res            Result
	err            error
	done           chan struct{}
}

// startCall runs f on a goroutine the test waits for.
func startCall(t *testing.T, f func(c *call) (Result, error)) *call {
	t.Helper()
	c := &call{done: make(chan struct{})}
	go func() { defer close(c.done); c.res, c.err = f(c) }()
	t.Cleanup(func() { <-c.done })
	return c
}

func (c *call) wait(t *testing.T) *call {
	t.Helper()
	select {
	case <-c.done:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return")
		return nil
	}
}

// startSend runs Send for o on a goroutine the test waits for.
func startSend(t *testing.T, ctx context.Context, o Options) *call {
	t.Helper()
	return startCall(t, func(c *call) (Result, error) {
		o.Stdout, o.Stderr = &c.stdout, &c.stderr
		o.Warn = func(msg string) { c.warnings = append(c.warnings, msg) }
		return Send(ctx, o)
	})
}

func TestSendRelaysOwnFrames(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	a := startFakeAgent(t, dir)
	s := startSend(t, context.Background(), Options{Dir: dir, Stdin: []byte("hi\n"), Limit: 2 * time.Second})
	req := a.next()
	require.Len(t, req.Reply, 32, "reply name: 128 bits in hex")
	require.Len(t, req.ID, 32, "request id: 128 bits in hex")
	require.NotEqual(t, req.ID, req.Reply)
	require.Equal(t, "hi\n", string(req.Stdin))
	require.Equal(t, 2*time.Second, req.Limit)
	w := a.openReply(req)
	var b []byte
	b = protocol.AppendStart(b, req.ID, 42)
	b = protocol.AppendData(b, "evil", protocol.FrameStdout, []byte("forged\n"))
	b = protocol.AppendExit(b, "evil", protocol.Exit{Code: 0})
	b = append(b, "not a frame\n"...)
	b = protocol.AppendData(b, req.ID, protocol.FrameStdout, []byte("out\n"))
	b = protocol.AppendData(b, "evil", protocol.FrameStdout, []byte("forged\n"))
	b = protocol.AppendData(b, req.ID, protocol.FrameStderr, []byte{0xff, 'e'})
	b = protocol.AppendExit(b, req.ID, protocol.Exit{Code: 7})
	_, err := w.Write(b)
	require.NoError(t, err)
	w.Close()
	s.wait(t)
	require.NoError(t, s.err)
	require.Equal(t, 7, s.res.Code)
	require.Equal(t, "out\n", s.stdout.String())
	require.Equal(t, []byte{0xff, 'e'}, s.stderr.Bytes())
	require.Len(t, s.warnings, 2, "one warning for id evil, one for the line: %q", s.warnings)
	require.Contains(t, s.warnings[0], `"evil"`)
	requireNoReplies(t, dir)
}

// The request is written as a newline and the line: a fragment left
// unterminated is a line of its own.
func TestSendStartsWithNewline(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	a := startFakeAgent(t, dir)
	w, err := os.OpenFile(filepath.Join(dir, "in"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	_, err = w.Write([]byte("fragment"))
	require.NoError(t, err)
	w.Close()
	s := startSend(t, context.Background(), Options{Dir: dir, ID: "mine"})
	require.Equal(t, "fragment", string(<-a.raw))
	require.Equal(t, "plain", map[bool]string{true: "plain"}[a.next().IsPlain])
	req := a.next()
	require.Equal(t, "mine", req.ID)
	reply := a.openReply(req)
	reply.Write(protocol.AppendExit(nil, req.ID, protocol.Exit{Code: 0}))
	reply.Close()
	require.NoError(t, s.wait(t).err)
}

// An agent that stops reading its input FIFO but still runs the request
// delivers its frames; send relays them to the exit frame.
func TestSendAgentStopping(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	writeStatus(t, dir, os.Getpid(), "running")
	a := startFakeAgent(t, dir)
	s := startSend(t, context.Background(), Options{Dir: dir})
	req := a.next()
	w := a.openReply(req)
	w.Write(protocol.AppendStart(nil, req.ID, 42))
	a.stopReading()
	writeStatus(t, dir, os.Getpid(), "stopping")
	w.Write(protocol.AppendData(nil, req.ID, protocol.FrameStdout, []byte("bye\n")))
	w.Write(protocol.AppendExit(nil, req.ID, protocol.Exit{Code: 3}))
	w.Close()
	s.wait(t)
	require.NoError(t, s.err)
	require.Equal(t, 3, s.res.Code)
	require.Equal(t, "bye\n", s.stdout.String())
	requireNoReplies(t, dir)
}

// The agent closing its reply FIFO before the exit frame is the agent gone.
func TestSendAgentGone(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	a := startFakeAgent(t, dir)
	s := startSend(t, context.Background(), Options{Dir: dir})
	req := a.next()
	w := a.openReply(req)
	w.Write(protocol.AppendStart(nil, req.ID, 42))
	w.Close()
	s.wait(t)
	require.ErrorIs(t, s.err, ErrAgentGone)
	requireNoReplies(t, dir)
}

func TestSendRejected(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	a := startFakeAgent(t, dir)
	s := startSend(t, context.Background(), Options{Dir: dir})
	req := a.next()
	w := a.openReply(req)
	w.Write(protocol.AppendError(nil, req.ID, "agent is stopping"))
	w.Close()
	s.wait(t)
	var rej *RejectedError
	require.ErrorAs(t, s.err, &rej)
	require.Equal(t, "agent is stopping", rej.Msg)
	requireNoReplies(t, dir)
}

func TestSendNoAgent(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	_, err := Send(context.Background(), Options{Dir: dir})
	require.ErrorIs(t, err, ErrNoAgent)
	requireNoReplies(t, dir)
	_, err = Send(context.Background(), Options{Dir: filepath.Join(dir, "missing")})
	require.ErrorIs(t, err, ErrNoAgent)
}

func TestSendCancelled(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	a := startFakeAgent(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	s := startSend(t, ctx, Options{Dir: dir})
	a.next() // queued, never answered
	cancel()
	require.ErrorIs(t, s.wait(t).err, context.Canceled)
	requireNoReplies(t, dir)
}

// A lock held on the input FIFO does not delay a request of at most
// PIPE_BUF bytes; a larger one gives up after LockPatience.
func TestSendLockRule(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	a := startFakeAgent(t, dir)
	holder, err := os.OpenFile(filepath.Join(dir, "in"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer holder.Close()
	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_EX))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The largest request that needs no lock: newline + line = PIPE_BUF.
	line, err := requestLine(strings.Repeat("i", 32), strings.Repeat("r", 32), []byte("x"), nil, 0)
	require.NoError(t, err)
	stdin := []byte(strings.Repeat("x", PipeBuf-len(line)+1))
	short := startSend(t, ctx, Options{Dir: dir, ID: strings.Repeat("i", 32), Stdin: stdin})
	req := a.next()
	require.Equal(t, stdin, req.Stdin)
	_, err = Send(ctx, Options{Dir: dir, Stdin: append(stdin, 'x')})
	require.ErrorIs(t, err, ErrLocked)
	cancel()
	short.wait(t)
	requireNoReplies(t, dir)
}

// The watch of a queued request: an agent that reads in, or that is alive
// and stopping, serves it; a dead one, or none, does not.
func TestAgentWatch(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	d, err := enterDir(dir, ErrNoAgent, "")
	require.NoError(t, err)
	defer d.Close()
	w := newAgentWatch(dirInput(d, inName))
	require.ErrorIs(t, w.gone(), ErrAgentGone, "nobody reads in, no status")
	writeStatus(t, dir, os.Getpid(), "running")
	w = newAgentWatch(dirInput(d, inName))
	a := startFakeAgent(t, dir)
	require.NoError(t, w.gone())
	a.stopReading()
	writeStatus(t, dir, os.Getpid(), "stopping")
	// The same agent (pid and start) must be named: rewrite keeps pid.
	w = newAgentWatch(dirInput(d, inName))
	require.NoError(t, w.gone(), "alive and stopping")
	writeStatus(t, dir, os.Getpid(), "stopped")
	w = newAgentWatch(dirInput(d, inName))
	require.ErrorIs(t, w.gone(), ErrAgentGone)
	writeStatus(t, dir, os.Getpid(), "stopping")
	w = newAgentWatch(dirInput(d, inName))
	require.NoError(t, w.gone())
	a.die() // a pid means nothing across PID namespaces; the lock tells
	require.ErrorIs(t, w.gone(), ErrAgentGone)
}

// An id the agent would refuse, and answer under an id of its own, is
// refused before anything is sent.
func TestSendIDTooLong(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	startFakeAgent(t, dir)
	_, err := Send(context.Background(), Options{Dir: dir, ID: strings.Repeat("i", protocol.MaxIDLen+1)})
	require.ErrorContains(t, err, "longer than")
	requireNoReplies(t, dir)
}

// Args go into the request in order, and only when there are any.
func TestRequestLineArgs(t *testing.T) {
	line, err := requestLine("i", "r", []byte("x"), []string{"a", "b c", "-n"}, 0)
	require.NoError(t, err)
	req, err := protocol.ParseRequest(bytes.TrimSpace(line))
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b c", "-n"}, req.Args)
	line, err = requestLine("i", "r", []byte("x"), nil, 0)
	require.NoError(t, err)
	require.NotContains(t, string(line), "args")
}

// A request or ask that does not fit one atomic write is sealed and whole
// pieces of PIPE_BUF bytes, and parses back to what was sent; a shorter
// one is written as it is.
func TestLinesSealed(t *testing.T) {
	for _, n := range []int{1, PipeBuf - 100, PipeBuf, 100_000} {
		stdin := bytes.Repeat([]byte("x"), n)
		line, err := requestLine("i", "r", stdin, nil, 0)
		require.NoError(t, err)
		ask, err := askLine("i", "r", AskOptions{Input: stdin})
		require.NoError(t, err)
		for _, l := range [][]byte{line, ask} {
			sealed := bytes.HasPrefix(l, []byte("\n{\"size\":"))
			require.Equal(t, len(l) > PipeBuf, sealed, "%d bytes", len(l))
			if sealed {
				require.Zero(t, len(l)%PipeBuf, "whole pieces")
			}
		}
		req, err := protocol.ParseRequest(bytes.Trim(line, "\n"))
		require.NoError(t, err)
		require.Equal(t, stdin, req.Stdin)
		a, err := protocol.ParseAsk(bytes.Trim(ask, "\n"))
		require.NoError(t, err)
		require.Equal(t, string(stdin), a.Input)
	}
}
