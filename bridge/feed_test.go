package bridge

import (
	"bytes"
	"crypto/rand"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	src, srcW, err := os.Pipe()
	require.NoError(t, err)
	f := newFeeder(src)
	done := make(chan struct{})
	go func() { defer close(done); f.run() }()

	// The first child reads nothing; more than a pipe buffer is sent, so the
	// feeder is blocked in the middle of a write when the child goes away.
	data := make([]byte, 200<<10)
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
	_, err = io.ReadFull(back2, got)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "input lost or reordered across children")

	f.detach()
	f.close()
	srcW.Close() // src reads EOF, so run returns
	<-done
	src.Close()
	require.Equal(t, before, countFDs(t), "descriptors left open")
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents) - 1
}

func TestFeederDeliversTakenBackInputWithoutNewInput(t *testing.T) {
	before := countFDs(t)
	src, srcW, err := os.Pipe()
	require.NoError(t, err)
	f := newFeeder(src)
	done := make(chan struct{})
	go func() { defer close(done); f.run() }()

	stdin1, back1 := childPipe(t)
	f.attach(stdin1, back1)
	_, err = srcW.Write([]byte("a\nb\nc\n"))
	require.NoError(t, err)
	// The first child takes one line and exits.
	line := make([]byte, 2)
	_, err = io.ReadFull(back1, line)
	require.NoError(t, err)
	require.Equal(t, "a\n", string(line))
	require.Eventually(t, func() bool { return f.held() == 0 }, 5*time.Second, time.Millisecond)
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
	srcW.Close()
	<-done
	src.Close()
	require.Equal(t, before, countFDs(t), "descriptors left open")
}
