//go:build linux

package client

import (
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// cancelPatience bounds how long a send that gives up waits to write its
// cancel line into a full input FIFO.
const cancelPatience = time.Second

// cancelRequest asks the agent serving the input FIFO in (a name in dir)
// to cancel request id: a queued request never starts, a running one is stopped.
// The line is short (an id is at most protocol.MaxIDLen bytes), so it is
// one atomic write that needs no lock; nothing waits for a reader, and a
// full FIFO is waited on for cancelPatience at most.
func cancelRequest(dir *sharedir.Dir, in, id string) error {
	w, err := fifo.OpenWriterNowAt(dir, in)
	if err != nil {
		return err
	}
	defer w.Close()
	w.SetWriteDeadline(time.Now().Add(cancelPatience))
	_, err = w.Write(protocol.AppendCancel(nil, id))
	return err
}
