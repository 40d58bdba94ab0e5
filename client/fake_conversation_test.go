//go:build linux

package client

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// fakeConversation plays an agent run with -prompt: it reads ask lines
// from DIR/ask.
type fakeConversation struct {
	*fakeServer[protocol.ParsedAsk]
}

// newConversationDir makes DIR with replies/ and a DIR/ask nobody reads.
func newConversationDir(t testing.TB) string {
	t.Helper()
	return makeServed(t, t.TempDir(), askName)
}

// startFakeConversation reads DIR/ask until the test ends or stop is
// called, holding DIR/lock as an agent does.
func startFakeConversation(t testing.TB, dir string) *fakeConversation {
	t.Helper()
	parse := func(line []byte) protocol.ParsedAsk { a, _ := protocol.ParseAsk(line); return a }
	return &fakeConversation{startFakeServer(t, dir, askName, parse, func(a protocol.ParsedAsk) string { return a.Reply })}
}

// stop closes DIR/ask and the lock, as the death of an agent does, and
// waits for the reading goroutine.
func (c *fakeConversation) stop() {
	c.stopReading()
	c.die()
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
