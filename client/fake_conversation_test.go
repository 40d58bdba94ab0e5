//go:build linux

package client

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// fakeConversation plays an agent run with -prompt on temporary FIFOs: it
// reads ask lines from DIR/ask and hands each to the test, which answers
// it by hand on the reply FIFO it names.
type fakeConversation struct {
	t    testing.TB
	dir  string
	ask  *os.File
	asks chan protocol.ParsedAsk
	done chan struct{}
	once sync.Once
	lock *os.File
}

// newConversationDir makes DIR with replies/ and a DIR/ask nobody reads.
func newConversationDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, askName), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "replies"), 0o755))
	return dir
}

// startFakeConversation reads DIR/ask until the test ends or stop is
// called, holding DIR/lock as an agent does.
func startFakeConversation(t testing.TB, dir string) *fakeConversation {
	t.Helper()
	ask, err := os.OpenFile(filepath.Join(dir, askName), os.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	c := &fakeConversation{t: t, dir: dir, ask: ask, asks: make(chan protocol.ParsedAsk, 16), done: make(chan struct{})}
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	c.lock, err = status.Lock(d, 0o644)
	d.Close()
	require.NoError(t, err)
	go c.read()
	t.Cleanup(c.stop)
	return c
}

func (c *fakeConversation) read() {
	defer close(c.done)
	lines := protocol.NewLineReader(c.ask, 1<<20)
	for {
		line, err := lines.Next()
		if err != nil {
			return
		}
		if protocol.IsBlank(line) {
			continue
		}
		a, _ := protocol.ParseAsk(line)
		c.asks <- a
	}
}

// stop closes DIR/ask and the lock, as the death of an agent does, and
// waits for the reading goroutine.
func (c *fakeConversation) stop() {
	c.once.Do(func() { c.ask.Close(); <-c.done; c.lock.Close() })
}

// next returns the next ask read.
func (c *fakeConversation) next() protocol.ParsedAsk {
	c.t.Helper()
	select {
	case a := <-c.asks:
		return a
	case <-time.After(10 * time.Second):
		c.t.Fatal("no ask arrived")
		return protocol.ParsedAsk{}
	}
}

// openReply opens the reply FIFO an ask names, as the agent does.
func (c *fakeConversation) openReply(a protocol.ParsedAsk) *os.File {
	c.t.Helper()
	w, err := fifo.OpenWriterNow(filepath.Join(c.dir, "replies", a.Reply))
	require.NoError(c.t, err)
	return w
}

// answer answers a with data as one answer frame and an end frame, on its
// reply FIFO opened for the turn and closed after it.
func (c *fakeConversation) answer(a protocol.ParsedAsk, data string) {
	c.t.Helper()
	w := c.openReply(a)
	defer w.Close()
	b := protocol.AppendData(nil, a.ID, protocol.FrameAnswer, []byte(data))
	b = protocol.AppendEnd(b, a.ID, protocol.End{})
	_, err := w.Write(b)
	require.NoError(c.t, err)
}

// replyGone reports whether the reply FIFO a names has no reader: it was
// removed, or nobody holds it open for reading.
func (c *fakeConversation) replyGone(a protocol.ParsedAsk) bool {
	w, err := fifo.OpenWriterNow(filepath.Join(c.dir, "replies", a.Reply))
	if err == nil {
		w.Close()
	}
	return err != nil
}
