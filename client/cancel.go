package client

import (
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// cancelPatience bounds how long a send that gives up waits to write its
// cancel line into a full input FIFO.
const cancelPatience = time.Second

// cancelRequest asks the agent serving the input FIFO at in to cancel
// request id: a queued request never starts, a running one is stopped.
// The line is short (an id is at most protocol.MaxIDLen bytes), so it is
// one atomic write that needs no lock; nothing waits for a reader, and a
// full FIFO is waited on for cancelPatience at most.
func cancelRequest(in, id string) error {
	w, err := fifo.OpenWriterNow(in)
	if err != nil {
		return err
	}
	defer w.Close()
	w.SetWriteDeadline(time.Now().Add(cancelPatience))
	_, err = w.Write(protocol.AppendCancel(nil, id))
	return err
}
