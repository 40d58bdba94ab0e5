//go:build linux

// Package answer holds what exec mode and conversations share in answering
// on reply FIFOs: the error frame, a write that never waits, the watch for
// a reply reader that left, what to do with a reply FIFO that cannot be
// opened, and the sweep of reply FIFOs their senders left behind.
//
// Guarantees: nothing here waits for a reader; a frame is written whole
// (at most PIPE_BUF bytes, one write) or not at all; the sweep removes only
// FIFOs nobody reads, names only through the directory's descriptor.
package answer

import (
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"golang.org/x/sys/unix"
)

// maxErrorLen bounds the message of an error frame, so that with an id of
// protocol.MaxIDLen (escaped, at most six times as long) the frame stays
// under PIPE_BUF and is written whole or not at all.
const maxErrorLen = 1024

// ErrorFrame is the error frame of the request or ask id: err's message,
// cut at maxErrorLen.
func ErrorFrame(id string, err error) []byte {
	msg := err.Error()
	if len(msg) > maxErrorLen {
		msg = msg[:maxErrorLen] + "..."
	}
	return protocol.AppendError(nil, id, msg)
}

// WriteNow writes frame, at most PIPE_BUF bytes, to the reply FIFO in one
// write(2) without waiting, if it is still the FIFO first opened: the
// kernel writes it whole or not at all. It fails with EAGAIN when the pipe
// is full.
func WriteNow(r *fifo.Reply, frame []byte) error {
	if err := r.Check(); err != nil {
		return err
	}
	rc, err := r.File().SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	if err := rc.Control(func(fd uintptr) {
		for {
			_, werr = unix.Write(int(fd), frame)
			if werr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return werr
}
