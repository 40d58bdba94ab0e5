//go:build linux

package client

import (
	"context"
	"io"
	"testing"

	"github.com/fifobridge/fifobridge/protocol"
)

// BenchmarkAskerTurn is the client's own share of a kept-open turn: one
// Ask to a fake conversation that answers each ask at once, with one
// answer frame and the end frame, on its reply FIFO opened for the turn.
func BenchmarkAskerTurn(b *testing.B) {
	dir := newConversationDir(b)
	c := startFakeConversation(b, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			select {
			case q := <-c.got:
				w := c.openReply(q)
				var f []byte
				f = protocol.AppendData(f, q.ID, protocol.FrameAnswer, []byte("1\n"))
				w.Write(protocol.AppendEnd(f, q.ID, protocol.End{}))
				w.Close()
			case <-ctx.Done():
				return
			}
		}
	}()
	a, err := OpenAsker(dir, AskerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ResetTimer()
	for range b.N {
		if _, err := a.Ask(ctx, Turn{Input: []byte("print(1)"), Stdout: io.Discard}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cancel()
	<-served
}
