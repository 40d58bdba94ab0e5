//go:build linux

package conversation

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// keptReply keeps the reply FIFO of the last asker open after its turn,
// for its next ask. A client that keeps its FIFOs open (client.Asker, the
// Python client of docs/conversations.md) names the same reply FIFO turn
// after turn; its next turn then begins with the descriptor the agent
// already has, once that passes the checks a fresh open makes (its name
// still names the FIFO first opened, with no other name, and someone
// reads it), instead of opening it again. It holds at most one such
// descriptor, under its own lock (taken under the conversation's, never
// the other way round): it is closed when an ask names another reply
// FIFO, when it fails a check, and at Stop; a turn that did not end with
// its frames written (its reader left, a write failed) keeps none, and
// once no turn will come (refuse) none is kept.
type keptReply struct {
	replies *sharedir.Dir // DIR/replies, where a reply FIFO is opened anew

	mu      sync.Mutex
	reply   *fifo.Reply // the last asker's, or nil
	refused bool        // no child will answer again, or the agent stops
}

// keep keeps reply, the reply FIFO of an asker whose frames were all
// written, for its next ask, in place of the one kept before; once
// refused, it is closed instead.
func (k *keptReply) keep(reply *fifo.Reply) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dropLocked()
	if k.refused {
		reply.Close()
		return
	}
	k.reply = reply
}

// refuse has every later keep close its reply FIFO: no ask will take
// it. The one kept stays until drop.
func (k *keptReply) refuse() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refused = true
}

// drop closes the kept reply FIFO, if any.
func (k *keptReply) drop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dropLocked()
}

func (k *keptReply) dropLocked() {
	if k.reply != nil {
		k.reply.Close()
		k.reply = nil
	}
}

// open opens the reply FIFO name of an ask, as fifo.OpenReply does:
// the kept one when it is name's and still good, otherwise anew (and the
// kept one, if any, is closed).
func (k *keptReply) open(name string) (*fifo.Reply, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r := k.reply; r != nil {
		k.reply = nil
		if r.Name() == name && r.Check() == nil && hasReader(r.File()) {
			return r, nil
		}
		r.Close()
	}
	return fifo.OpenReply(k.replies, name)
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
