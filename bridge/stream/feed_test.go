//go:build linux

package stream

import (
	"bytes"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/bridge/internal/idle"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/sharedir"
)

// childPipe is a stdin pipe as start makes it (pipeio.Input): the
// agent's end, open for reading and writing, which is also where
// leftovers are taken back from, and the child's read end, which start
// closes once the child has it (the caller closes it after detach).
func childPipe(t *testing.T) (stdin, back, child *os.File) {
	t.Helper()
	stdin, back, child, err := pipeio.Input()
	require.NoError(t, err)
	require.Same(t, stdin, back, "the agent's end is not open for both: /proc is missing?")
	return stdin, back, child
}

// twoEndPipe is a stdin pipe as start makes it without /proc: the
// agent's non-blocking write end, and the child's read end, which the
// agent keeps to take leftovers back (back and child are one).
func twoEndPipe(t *testing.T) (stdin, back, child *os.File) {
	t.Helper()
	stdin, back, err := pipeio.Pipe(false)
	require.NoError(t, err)
	return stdin, back, back
}

func TestFeederKeepsWhatAChildDidNotRead(t *testing.T) {
	for name, pipe := range map[string]func(*testing.T) (stdin, back, child *os.File){"one end": childPipe, "two ends": twoEndPipe} {
		t.Run(name, func(t *testing.T) { feederKeeps(t, pipe) })
	}
}

// feederKeeps is TestFeederKeepsWhatAChildDidNotRead on pipes that pipe
// makes.
func feederKeeps(t *testing.T, pipe func(*testing.T) (stdin, back, child *os.File)) {
	before := leakcheck.FDs(t)
	src, srcW, srcDir := inputFIFO(t)
	f := newFeeder(src, idle.NewClock())
	done := make(chan struct{})
	go func() { defer close(done); f.run() }()

	// The first child reads nothing; more than a pipe buffer is sent, so the
	// feeder is blocked in the middle of a write when the child goes away.
	data := make([]byte, 3<<20)
	rand.Read(data)
	wrote := make(chan error, 1)
	go func() { _, err := srcW.Write(data); wrote <- err }()
	stdin1, back1, child1 := pipe(t)
	f.attach(stdin1, back1, nil)
	size, err := unix.FcntlInt(child1.Fd(), unix.F_GETPIPE_SZ, 0)
	require.NoError(t, err)
	waitUnread(t, child1, size) // the child's pipe is full: the feeder waits to write
	if child1 != back1 {
		child1.Close() // the child is gone: only the agent's end is left
	}
	f.detach()

	// The second child gets everything, in order.
	stdin2, back2, child2 := pipe(t)
	f.attach(stdin2, back2, nil)
	got := make([]byte, len(data))
	_, err = io.ReadFull(child2, got)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "input lost or reordered across children")
	require.NoError(t, <-wrote)

	if child2 != back2 {
		child2.Close()
	}
	f.detach()
	f.close()
	src.Close() // wakes the feeder's splice
	<-done
	srcW.Close()
	srcDir.Close()
	require.Equal(t, before, leakcheck.FDs(t), "descriptors left open")
}

// inputFIFO is an input FIFO as the agent holds it (its directory too,
// which the caller closes after it), and a writer.
func inputFIFO(t *testing.T) (*fifo.Source, *os.File, *sharedir.Dir) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "in")
	require.NoError(t, unix.Mkfifo(p, 0o600))
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	src, err := fifo.OpenSourceAt(d, "in")
	require.NoError(t, err)
	w, err := fifo.OpenWriterNow(p)
	require.NoError(t, err)
	return src, w, d
}

// waitUnread waits until the pipe whose read end is r holds n unread bytes.
func waitUnread(t *testing.T, r *os.File, n int) {
	t.Helper()
	var unread int
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for unread, err = unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ); err == nil && unread != n; unread, err = unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) {
		require.True(t, time.Now().Before(deadline), "pipe holds %d unread bytes after 10s, want %d", unread, n)
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, err)
}

func TestFeederDeliversTakenBackInputWithoutNewInput(t *testing.T) {
	before := leakcheck.FDs(t)
	src, srcW, srcDir := inputFIFO(t)
	f := newFeeder(src, idle.NewClock())
	done := make(chan struct{})
	go func() { defer close(done); f.run() }()

	stdin1, back1, child1 := childPipe(t)
	f.attach(stdin1, back1, nil)
	_, err := srcW.Write([]byte("a\nb\nc\n"))
	require.NoError(t, err)
	// The first child takes one line and exits.
	line := make([]byte, 2)
	_, err = io.ReadFull(child1, line)
	require.NoError(t, err)
	require.Equal(t, "a\n", string(line))
	waitUnread(t, child1, len("b\nc\n")) // the feeder moved everything into the pipe
	child1.Close()
	f.detach()
	require.Equal(t, 4, f.held(), "the unread lines are taken back")

	stdin2, back2, child2 := childPipe(t)
	f.attach(stdin2, back2, nil)
	rest := make([]byte, 4)
	_, err = io.ReadFull(child2, rest)
	require.NoError(t, err)
	require.Equal(t, "b\nc\n", string(rest), "the next child gets them with no new input")

	child2.Close()
	f.detach()
	f.close()
	src.Close()
	<-done
	srcW.Close()
	srcDir.Close()
	require.Equal(t, before, leakcheck.FDs(t), "descriptors left open")
}

// expectations records when the copy of a child's output was told that an
// answer is due: the bytes then unread in the child's stdin pipe.
type expectations struct {
	back   *os.File
	unread []int
}

func (e *expectations) Expect() {
	n, _ := unix.IoctlGetInt(int(e.back.Fd()), unix.TIOCINQ)
	e.unread = append(e.unread, n)
}

// A turn's input, once written, tells the copy of the child's output that
// an answer is due; bytes typed into the input FIFO do not.
func TestFeederExpectsAnAnswerAfterATurn(t *testing.T) {
	before := leakcheck.FDs(t)
	src, srcW, srcDir := inputFIFO(t)
	f := newFeeder(src, idle.NewClock())
	done := make(chan struct{})
	go func() { defer close(done); f.run() }()

	stdin, back, child := childPipe(t)
	e := &expectations{back: back}
	f.attach(stdin, back, e)
	_, err := srcW.Write([]byte("typed\n"))
	require.NoError(t, err)
	waitUnread(t, back, len("typed\n"))
	require.NoError(t, f.writeTurn([]byte("turn\n")))
	f.detach()
	child.Close()
	require.Equal(t, []int{len("typed\nturn\n")}, e.unread, "told before the turn's input was written, or not once")

	f.close()
	src.Close()
	<-done
	srcW.Close()
	srcDir.Close()
	require.Equal(t, before, leakcheck.FDs(t), "descriptors left open")
}
