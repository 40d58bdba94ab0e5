package bridge

import (
	"bytes"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/fifo"
)

// childPipe is a stdin pipe as start makes it: the agent's non-blocking write
// end and the child's read end.
func childPipe(t *testing.T) (stdin, back *os.File) {
	t.Helper()
	stdin, back, err := pipe(false)
	require.NoError(t, err)
	return stdin, back
}

func TestFeederKeepsWhatAChildDidNotRead(t *testing.T) {
	before := countFDs(t)
	src, srcW := inputFIFO(t)
	f := newFeeder(src)
	done := make(chan struct{})
	go func() { defer close(done); f.run() }()

	// The first child reads nothing; more than a pipe buffer is sent, so the
	// feeder is blocked in the middle of a write when the child goes away.
	data := make([]byte, 3<<20)
	rand.Read(data)
	go srcW.Write(data)
	stdin1, back1 := childPipe(t)
	f.attach(stdin1, back1)
	time.Sleep(100 * time.Millisecond)
	f.detach()

	// The second child gets everything, in order.
	stdin2, back2 := childPipe(t)
	f.attach(stdin2, back2)
	got := make([]byte, len(data))
	_, err := io.ReadFull(back2, got)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "input lost or reordered across children")

	f.detach()
	f.close()
	src.Close() // wakes the feeder's splice
	<-done
	srcW.Close()
	require.Equal(t, before, countFDs(t), "descriptors left open")
}

// inputFIFO is an input FIFO as the agent holds it, and a writer.
func inputFIFO(t *testing.T) (*fifo.Source, *os.File) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in")
	_, err := fifo.Make(p, 0o600)
	require.NoError(t, err)
	src, err := fifo.OpenSource(p)
	require.NoError(t, err)
	w, err := fifo.OpenWriterNow(p)
	require.NoError(t, err)
	return src, w
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents) - 1
}

func TestFeederDeliversTakenBackInputWithoutNewInput(t *testing.T) {
	before := countFDs(t)
	src, srcW := inputFIFO(t)
	f := newFeeder(src)
	done := make(chan struct{})
	go func() { defer close(done); f.run() }()

	stdin1, back1 := childPipe(t)
	f.attach(stdin1, back1)
	_, err := srcW.Write([]byte("a\nb\nc\n"))
	require.NoError(t, err)
	// The first child takes one line and exits.
	line := make([]byte, 2)
	_, err = io.ReadFull(back1, line)
	require.NoError(t, err)
	require.Equal(t, "a\n", string(line))
	time.Sleep(50 * time.Millisecond) // the feeder moved everything into the pipe
	f.detach()
	require.Equal(t, 4, f.held(), "the unread lines are taken back")

	stdin2, back2 := childPipe(t)
	f.attach(stdin2, back2)
	rest := make([]byte, 4)
	_, err = io.ReadFull(back2, rest)
	require.NoError(t, err)
	require.Equal(t, "b\nc\n", string(rest), "the next child gets them with no new input")

	f.detach()
	f.close()
	src.Close()
	<-done
	srcW.Close()
	require.Equal(t, before, countFDs(t), "descriptors left open")
}
