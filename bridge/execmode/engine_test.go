//go:build linux

package execmode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/internal/procfs"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// engine is an Engine on temporary FIFOs, run by the test: the FIFOs,
// the agent's ends of them, a writer of its input, and a way to stop it.
type engine struct {
	t       *testing.T
	e       *Engine
	dir     string
	out     string   // the output FIFO's path
	in      *os.File // writes requests
	stop    context.CancelFunc
	stopped chan struct{} // run returned
	reaper  *child.Reaper
}

// startEngine runs exec mode with PROGRAM /bin/sh -c script. It checks, when
// the test ends, that run returned and that no descriptor or goroutine of
// the test is left.
func startEngine(t *testing.T, script string, tune func(*Config)) *engine {
	t.Helper()
	noLeaks(t)
	dir := t.TempDir()
	inPath, outPath := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	cfg := &Config{
		Child:      child.Spec{Program: "/bin/sh", Args: []string{"-c", script}},
		StopSignal: syscall.SIGTERM, StopTimeout: 300 * time.Millisecond,
		MaxConcurrent: 4, MaxRequest: 1 << 20,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if testing.Verbose() {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if tune != nil {
		tune(cfg)
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "replies"), 0o700))
	for _, p := range []string{inPath, outPath} {
		require.NoError(t, unix.Mkfifo(p, 0o600))
	}
	fifos, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	src, err := fifo.OpenSourceAt(fifos, "in")
	require.NoError(t, err)
	sink, err := fifo.OpenSinkAt(fifos, "out")
	require.NoError(t, err)
	in, err := fifo.OpenWriterNow(inPath)
	require.NoError(t, err)
	replies, err := sharedir.Open(filepath.Join(dir, "replies"), false)
	require.NoError(t, err)
	cfg.Replies = replies
	reaper := child.NewReaper(cfg.Log)
	ctx, cancel := context.WithCancel(context.Background())
	g := &engine{t: t, dir: dir, out: outPath, in: in, stop: cancel, stopped: make(chan struct{}), reaper: reaper,
		e: New(cfg, reaper, src, sink, func() {})}
	go func() { defer close(g.stopped); g.e.Run(ctx) }()
	t.Cleanup(func() {
		g.stopWithin(10 * time.Second)
		reaper.Close()
		in.Close()
		replies.Close()
		fifos.Close()
	})
	return g
}

// noLeaks checks, when the test ends (call it first: its check runs after
// every later cleanup), that the test left no child, descriptor or
// goroutine. The reaper's reserve of descriptors lives as long as the
// process once made (see child.NewReaper): it is made before counting.
func noLeaks(t *testing.T) {
	t.Helper()
	leakcheck.Check(t, procfs.Reserve)
}

// stopWithin stops the engine and fails unless run returns within d.
func (g *engine) stopWithin(d time.Duration) {
	g.t.Helper()
	g.stop()
	select {
	case <-g.stopped:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		g.t.Fatalf("run did not return within %v of the stop:\n%s", d, buf[:runtime.Stack(buf, true)])
	}
}

// write writes request lines to the input FIFO.
func (g *engine) write(lines string) {
	g.t.Helper()
	g.in.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := g.in.Write([]byte(lines))
	require.NoError(g.t, err)
}

// openReaderNow opens the FIFO at path for reading without waiting for a
// writer, as a sender does.
func openReaderNow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
}

// reader opens a FIFO for reading; closed when the test ends.
func reader(t *testing.T, path string) *bufio.Reader {
	t.Helper()
	f, err := openReaderNow(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	f.SetReadDeadline(time.Now().Add(20 * time.Second))
	return bufio.NewReader(f)
}

// frame reads the next frame from r.
func frame(t *testing.T, r *bufio.Reader) protocol.Frame {
	t.Helper()
	line, err := r.ReadBytes('\n')
	require.NoError(t, err, "read a frame; got %q", line)
	var f protocol.Frame
	require.NoError(t, json.Unmarshal(line, &f), "%q", line)
	return f
}

// fill makes the FIFO at path full; the agent's end keeps it open, so it
// needs no reader.
func fill(t *testing.T, path string) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	chunk := bytes.Repeat([]byte("#"), 4096)
	for {
		if _, err := unix.Write(fd, chunk); err != nil {
			require.ErrorIs(t, err, unix.EAGAIN)
			return
		}
	}
}

// stalledReply makes replies/name, opens it for reading never to read it,
// and fills it.
func (g *engine) stalledReply(name string) {
	g.t.Helper()
	path := filepath.Join(g.dir, "replies", name)
	require.NoError(g.t, unix.Mkfifo(path, 0o600))
	reader(g.t, path)
	fill(g.t, path)
}

// The stop's give-up deadline ends a write to an output FIFO that is full
// and nobody reads: run returns within -stop-timeout plus a second.
func TestExecStopGivesUpBlockedOutput(t *testing.T) {
	g := startEngine(t, "cat", nil)
	fill(t, g.out)
	g.write("hello\n" + strings.Repeat("{bad\n", 3000))
	require.Eventually(t, func() bool { return g.e.rejected.Load() == 3000 }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return g.e.out.untaken() > 0 }, 10*time.Second, 5*time.Millisecond)
	g.stopWithin(g.e.cfg.StopTimeout + bound.StopGrace + 250*time.Millisecond)
}

// A request's time limit runs from its start even when its start frame
// cannot be written, and its slot is freed although its frames wait.
func TestExecTimeLimitArmedAtStart(t *testing.T) {
	g := startEngine(t, "exec sleep 30", func(c *Config) { c.MaxConcurrent = 1 })
	fill(t, g.out)
	g.write(`{"id":"slow","timeout":"100ms"}` + "\n")
	require.Eventually(t, func() bool { return g.e.completed.Load() == 1 && g.e.active.Load() == 0 },
		10*time.Second, 5*time.Millisecond, "the request ended at its limit")
	require.Len(t, g.e.slots, 0, "its slot is free")
	g.stopWithin(g.e.cfg.StopTimeout + time.Second)
}

// A burst of bad lines, while a reader takes the output, gets every one of
// its error frames: the request loop waits for the rejection queue rather
// than drop.
func TestExecRejectionBurstWithReader(t *testing.T) {
	g := startEngine(t, "cat", nil)
	out := reader(t, g.out)
	const n = 3000
	var burst strings.Builder
	for i := range n {
		fmt.Fprintf(&burst, `{"id":"e%d","x":%s}`+"\n", i, strings.Repeat("[", 50))
	}
	written := make(chan struct{})
	go func() { defer close(written); g.write(burst.String()) }()
	for i := range n {
		f := frame(t, out)
		require.Equal(t, protocol.FrameError, f.Type)
		require.Equal(t, fmt.Sprintf("e%d", i), f.ID, "error frames in order, none dropped")
	}
	<-written
	g.stopWithin(g.e.cfg.StopTimeout + time.Second)
}

// Requests whose reply FIFOs are full and never read, accepted or
// rejected, do not hold up the request loop or another request; the stop
// gives their writes up.
func TestExecStalledReplyDoesNotBlockAccept(t *testing.T) {
	g := startEngine(t, "cat", func(c *Config) { c.MaxConcurrent = 8 })
	out := reader(t, g.out)
	big := strings.Repeat("z", 300_000)
	for i := range 3 {
		name := fmt.Sprintf("stall%d", i)
		g.stalledReply(name)
		g.write(sealed(fmt.Sprintf(`{"id":"a%d","reply":%q,"stdin":%q}`, i, name, big)))
		g.write(fmt.Sprintf(`{"id":"b%d","reply":%q,"args":["x"]}`+"\n", i, name))
	}
	g.write(`{"id":"honest","stdin":"hi\n"}` + "\n")
	var got []string
	for {
		f := frame(t, out)
		require.Equal(t, "honest", f.ID)
		got = append(got, f.Type)
		if f.Type == protocol.FrameExit {
			break
		}
	}
	require.Equal(t, []string{"start", "stdout", "exit"}, got)
	require.Eventually(t, func() bool { return g.e.rejected.Load() == 3 }, 10*time.Second, 5*time.Millisecond)
	g.stopWithin(g.e.cfg.StopTimeout + time.Second)
}

// At a stop, running requests whose trees ignore the stop signal are
// killed at -stop-timeout and each gets its exit frame, to a reader that is
// attached; lines read but not started get an error frame each.
func TestExecStopOrdering(t *testing.T) {
	g := startEngine(t, `trap "" TERM; echo ready; exec sleep 30`, func(c *Config) { c.MaxConcurrent = 3 })
	out := reader(t, g.out)
	g.write(`{"id":"k0"}` + "\n" + `{"id":"k1"}` + "\n" + `{"id":"k2"}` + "\n" + `{"id":"q"}` + "\n")
	for ready := 0; ready < 3; {
		if f := frame(t, out); f.Type == protocol.FrameStdout {
			ready++
		}
	}
	g.stop()
	ends := map[string]protocol.Frame{}
	for len(ends) < 4 {
		f := frame(t, out)
		if f.Type == protocol.FrameExit || f.Type == protocol.FrameError {
			require.NotContains(t, ends, f.ID, "one end per request")
			ends[f.ID] = f
		}
	}
	for _, id := range []string{"k0", "k1", "k2"} {
		require.Equal(t, protocol.FrameExit, ends[id].Type, id)
		require.Equal(t, "KILL", ends[id].Signal, id)
	}
	require.Equal(t, protocol.FrameError, ends["q"].Type)
	require.Contains(t, ends["q"].Error, "stopping")
	g.stopWithin(g.e.cfg.StopTimeout + time.Second)
}

// Blank lines are skipped, not requests.
func TestExecBlankLinesAreSkipped(t *testing.T) {
	g := startEngine(t, "cat", nil)
	out := reader(t, g.out)
	g.write("\n  \t\r\n\nreal\n")
	f := frame(t, out)
	require.Equal(t, protocol.FrameStart, f.Type)
	f = frame(t, out)
	require.Equal(t, "real\n", string(f.Bytes()))
	require.Equal(t, protocol.FrameExit, frame(t, out).Type)
	require.EqualValues(t, 0, g.e.rejected.Load())
	require.EqualValues(t, 1, g.e.accepted.Load())
}

// A program that cannot start is one error frame, on the request's output.
func TestExecProgramCannotStart(t *testing.T) {
	g := startEngine(t, "", func(c *Config) { c.Child.Program = "/nonexistent/program" })
	out := reader(t, g.out)
	g.write(`{"id":"nope"}` + "\n")
	f := frame(t, out)
	require.Equal(t, protocol.FrameError, f.Type)
	require.Equal(t, "nope", f.ID)
	require.Len(t, g.e.slots, 0, "its slot is free")
}

// When a request's reply reader leaves, the request is stopped even while
// its child writes nothing, and its slot is free again.
func TestExecReplyReaderLeaves(t *testing.T) {
	g := startEngine(t, "exec sleep 30", func(c *Config) { c.MaxConcurrent = 1 })
	path := filepath.Join(g.dir, "replies", "gone")
	require.NoError(t, unix.Mkfifo(path, 0o600))
	f, err := openReaderNow(path)
	require.NoError(t, err)
	g.write(`{"id":"q","reply":"gone"}` + "\n")
	// Until the agent has it open, a read would return EOF.
	require.Eventually(t, func() bool { return g.e.accepted.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	f.SetReadDeadline(time.Now().Add(10 * time.Second))
	require.Equal(t, protocol.FrameStart, frame(t, bufio.NewReader(f)).Type)
	f.Close()
	require.Eventually(t, func() bool { return g.e.completed.Load() == 1 && len(g.e.slots) == 0 },
		10*time.Second, 5*time.Millisecond)
}

// queueOn is a rejection queue of limit bytes writing to a new output FIFO,
// and that FIFO's path; run is going until the test ends.
func queueOn(t *testing.T, limit int) (*rejectionQueue, string) {
	t.Helper()
	noLeaks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	require.NoError(t, unix.Mkfifo(path, 0o600))
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	sink, err := fifo.OpenSinkAt(d, "out")
	require.NoError(t, err)
	q := newRejectionQueue(newOutFIFO(sink), limit, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan struct{})
	go func() { defer close(done); q.run() }()
	t.Cleanup(func() {
		sink.Close() // wakes a blocked write
		q.close()
		<-done
		d.Close()
	})
	return q, path
}

// While a reader takes frames, a full rejection queue holds up its caller
// (the request loop) rather than drop a frame.
func TestRejectionQueueBackpressure(t *testing.T) {
	q, path := queueOn(t, 300)
	fill(t, path) // the writer blocks at once
	const n = 20
	frames := make(chan struct{})
	go func() {
		defer close(frames)
		for i := range n {
			q.put(protocol.AppendError(nil, fmt.Sprintf("e%02d", i), strings.Repeat("m", 60)))
		}
	}()
	r := reader(t, path)
	for {
		b, err := r.ReadByte()
		require.NoError(t, err)
		if b != '#' {
			require.NoError(t, r.UnreadByte())
			break
		}
	}
	for i := range n {
		require.Equal(t, fmt.Sprintf("e%02d", i), frame(t, r).ID, "every frame, in order")
	}
	<-frames
	q.mu.Lock()
	defer q.mu.Unlock()
	require.Zero(t, q.dropped)
}

// With nobody reading the output FIFO, a full rejection queue drops frames
// after bound.ReaderPatience rather than hold up the request loop for good.
func TestRejectionQueueDropsWithoutReader(t *testing.T) {
	q, path := queueOn(t, 300)
	fill(t, path)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			q.put(protocol.AppendError(nil, fmt.Sprintf("e%02d", i), strings.Repeat("m", 60)))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("put waits although nobody reads the output fifo")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	require.Greater(t, q.dropped, 0)
}

// A finished request whose reply reader stays but never reads does not
// keep its writer: after its patience the write is given up, the reply FIFO
// closed, and nothing waits for a stop.
func TestExecStalledReplyGivenUpAfterTheRequest(t *testing.T) {
	g := startEngine(t, "cat", nil)
	g.stalledReply("stall")
	g.write(sealed(`{"id":"s","reply":"stall","timeout":"200ms","stdin":"` + strings.Repeat("y", 200_000) + `"}`))
	require.Eventually(t, func() bool { return g.e.completed.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return g.e.rule.Watching() == 0 }, bound.ReaderPatience+5*time.Second, 10*time.Millisecond, "the stalled reply's writer was given up")
	g.stopWithin(g.e.cfg.StopTimeout + time.Second)
}

// A reader that takes a little now and then, never letting a write block
// for long, cannot hold a stop: past the give-up deadline every write is
// given up.
func TestExecTricklingReaderCannotHoldAStop(t *testing.T) {
	g := startEngine(t, "cat", nil)
	path := filepath.Join(g.dir, "replies", "trickle")
	require.NoError(t, unix.Mkfifo(path, 0o600))
	f, err := openReaderNow(path)
	require.NoError(t, err)
	defer f.Close()
	// A child that never ends by itself and writes more than the pipe
	// holds, so that frames wait for the trickling reader.
	g.write(sealed(`{"id":"t","reply":"trickle","stdin":"` + strings.Repeat("x", 2<<20) + `"}`))
	buf := make([]byte, 512)
	f.SetReadDeadline(time.Now().Add(10 * time.Second))
	for n := 0; n == 0; { // EOF until the agent opens its end
		n, err = f.Read(buf)
		require.True(t, err == nil || err == io.EOF, "the first frame arrives: %v", err)
	}
	done := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := f.Read(buf); err != nil && !os.IsTimeout(err) {
				return
			}
		}
	}()
	g.stopWithin(g.e.cfg.StopTimeout + time.Second)
	close(done)
	<-trickled
}

// A reply FIFO that is moved away while its request runs, with another FIFO
// put in its place, is not written to any more, and neither is the new one:
// the request is canceled.
func TestExecReplyMovedIsNotWritten(t *testing.T) {
	g := startEngine(t, `read m; echo first; while [ ! -e "$m" ]; do sleep 0.01; done; echo second`, nil)
	replies := filepath.Join(g.dir, "replies")
	path := filepath.Join(replies, "r")
	require.NoError(t, unix.Mkfifo(path, 0o600))
	old := reader(t, path)
	// A writer of our own until the agent's is there: no EOF before it.
	keeper, err := fifo.OpenWriterNow(path)
	require.NoError(t, err)
	mark := filepath.Join(g.dir, "go-on")
	g.write(fmt.Sprintf(`{"id":"m","reply":"r","stdin":%q}`+"\n", mark+"\n"))
	require.Equal(t, protocol.FrameStart, frame(t, old).Type)
	keeper.Close()
	f := frame(t, old)
	require.Equal(t, "first\n", string(f.Bytes()))

	require.NoError(t, os.Rename(path, filepath.Join(replies, "moved")))
	require.NoError(t, unix.Mkfifo(path, 0o600))
	swapped, err := openReaderNow(path)
	require.NoError(t, err)
	defer swapped.Close()
	require.NoError(t, os.WriteFile(mark, nil, 0o600))

	require.Eventually(t, func() bool { return g.e.completed.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	g.stopWithin(g.e.cfg.StopTimeout + time.Second)
	n, _ := swapped.Read(make([]byte, 1))
	require.Zero(t, n, "nothing reaches the FIFO put in the reply's place")
	rest, _ := io.ReadAll(old)
	require.NotContains(t, string(rest), "second", "nothing more reaches the moved FIFO")
}

// feed never waits for the child: stdin larger than what the pipe holds
// (a pipe the kernel gave one page, as it does to a user over its pipe
// page limit) is written by a goroutine that a drain wakes.
func TestExecFeedDoesNotWaitForTheChild(t *testing.T) {
	noLeaks(t)
	w, rd, err := pipeio.Pipe(false) // w: the agent's non-blocking end
	require.NoError(t, err)
	defer rd.Close()
	_, err = unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096)
	require.NoError(t, err)
	r := &request{req: protocol.Parsed{Stdin: bytes.Repeat([]byte("s"), 60<<10)}, stdin: w}
	fed := make(chan struct{})
	go func() { defer close(fed); r.feed() }()
	select {
	case <-fed:
	case <-time.After(10 * time.Second):
		w.SetDeadline(time.Unix(1, 0)) // let the old inline write go
		<-fed
		t.Fatal("feed waited for a child that does not read its stdin")
	}
	w.SetDeadline(time.Unix(1, 0)) // what finish does
	r.io.Wait()
}

// Finished requests whose frames wait for an output FIFO nobody reads do
// not keep their pipes: after the patience the rest of their frames is
// dropped, so descriptors do not pile up request after request.
func TestExecUnreadOutputDoesNotPileUpDescriptors(t *testing.T) {
	// Output on both pipes: more frames than the writer's queue holds.
	g := startEngine(t, "cat; echo err >&2", nil)
	fill(t, g.out)
	before := leakcheck.FDs(t)
	const n = 20
	for i := range n {
		g.write(fmt.Sprintf(`{"id":"p%d","stdin":"hello\n"}`+"\n", i))
	}
	require.Eventually(t, func() bool { return g.e.completed.Load() == n }, 20*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return leakcheck.FDs(t) <= before+4 }, bound.ReaderPatience+10*time.Second, 20*time.Millisecond,
		"descriptors of finished requests whose output nobody reads are kept")
	g.stopWithin(g.e.cfg.StopTimeout + time.Second)
}
