//go:build linux

package conversation

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
)

// This file keeps the reply FIFO of the last asker open after its turn,
// for its next ask. A client that keeps its FIFOs open (client.Asker, the
// Python client of docs/conversations.md) names the same reply FIFO turn
// after turn; its next turn then begins with the descriptor the agent
// already has, once that passes the checks a fresh open makes (its name
// still names the FIFO first opened, with no other name, and someone
// reads it), instead of opening it again. The conversation holds at most
// one such descriptor, under c.mu: it is closed when an ask names another
// reply FIFO, when it fails a check, and at Stop; a turn that did not end
// with its frames written (its reader left, a write failed) keeps none.

// keep keeps reply, the reply FIFO of an asker whose frames were all
// written, for its next ask, in place of the one kept before; once the
// conversation ended it is closed instead. Under c.mu.
func (c *Conversation) keep(reply *fifo.Reply) {
	c.dropKept()
	if c.ended != nil || c.stopping {
		reply.Close()
		return
	}
	c.kept = reply
}

// dropKept closes the kept reply FIFO, if any. Under c.mu.
func (c *Conversation) dropKept() {
	if c.kept != nil {
		c.kept.Close()
		c.kept = nil
	}
}

// openReply opens the reply FIFO name of an ask, as fifo.OpenReply does:
// the kept one when it is name's and still good, otherwise anew (and the
// kept one, if any, is closed). Under c.mu.
func (c *Conversation) openReply(name string) (*fifo.Reply, error) {
	if k := c.kept; k != nil {
		c.kept = nil
		if k.Name() == name && k.Check() == nil && hasReader(k.File()) {
			return k, nil
		}
		k.Close()
	}
	return fifo.OpenReply(c.cfg.Replies, name)
}

// hasReader says whether the FIFO whose write end is f has a reader now:
// the write end of a pipe whose last reader closed it polls POLLERR.
func hasReader(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	fds := []unix.PollFd{{Events: unix.POLLOUT}}
	cerr := rc.Control(func(fd uintptr) {
		fds[0].Fd = int32(fd)
		for {
			if _, err = unix.Poll(fds, 0); err != unix.EINTR {
				return
			}
		}
	})
	return cerr == nil && err == nil && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) == 0
}
