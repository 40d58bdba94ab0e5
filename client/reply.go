//go:build linux

package client

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// replyFIFO is send's private reply FIFO in DIR/replies. It is read through
// a non-blocking read end; keeper, a write end of its own, stands in for the
// agent's until the agent shows it holds one (its first frame), so that the
// read end sees no EOF while the request waits in the queue. Once keeper is
// closed, EOF means the agent closed its write end: the request is over or
// the agent is gone.
type replyFIFO struct {
	name, path string
	dir        *sharedir.Dir // DIR/replies, opened once: every operation on the FIFO goes through it
	key        replyKey      // who may write to it, and what may carry its name
	r          *os.File
	keeper     *os.File
	// lines reads frames from r. It lives as long as r does: an Asker's
	// turns share it, so that nothing it read ahead is lost between them.
	lines   *protocol.LineReader
	read    countingReader // r, counted: whether the agent wrote at all
	removed bool           // its name was removed (unlink)
}

// countingReader counts the bytes read through it; the count may be read
// by another goroutine.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// makeReply makes a reply FIFO with a random name in DIR/replies, which the
// agent made, and opens both its ends. DIR and replies/ are only entered,
// never listed: a user who may enter DIR and create files in replies/
// (mode 1733) needs nothing more.
func makeReply(dir *sharedir.Dir) (*replyFIFO, error) {
	name := randname.New()
	replies, key, err := enterReplies(dir)
	if err != nil {
		return nil, err
	}
	p := &replyFIFO{name: name, path: replies.Join(name), dir: replies, key: key}
	created, err := fifo.MakeAt(replies, name, key.mode())
	if err != nil || !created {
		replies.Close()
		if err == nil {
			err = fmt.Errorf("make reply FIFO %s: something else made it first", p.path)
		}
		return nil, err
	}
	if p.r, err = fifo.OpenReaderNowAt(replies, name); err != nil {
		p.remove()
		return nil, err
	}
	p.read.r = p.r
	p.lines = protocol.NewLineReader(&p.read, maxFrame)
	if p.keeper, err = fifo.OpenWriterNowAt(replies, name); err != nil {
		p.remove()
		return nil, err
	}
	return p, nil
}

// lost says why the FIFO lost its name, once it has (else nil): nobody
// but the agent (the owner of replies/, mode 1733) or root can remove it,
// and the agent does that for a request it cannot answer (nothing was
// written to the FIFO: ErrUnanswerable) or one whose reader it gave up
// (it had written: ErrGivenUp).
func (p *replyFIFO) lost() error {
	switch {
	case !p.unlinked():
		return nil
	case p.written():
		return fmt.Errorf("%w (reply FIFO %s)", ErrGivenUp, p.path)
	}
	return fmt.Errorf("%w %s: its log says why", ErrUnanswerable, p.path)
}

// written says whether the agent wrote anything to the FIFO: a frame was
// read, or bytes wait in the FIFO or in the line reader.
func (p *replyFIFO) written() bool {
	if p.read.n.Load() > 0 {
		return true
	}
	rc, err := p.r.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }) // FIONREAD
	return n > 0
}

// unlinked says whether the FIFO has lost its name.
func (p *replyFIFO) unlinked() bool {
	rc, err := p.r.SyscallConn() // not Fd(): that would make reads blocking
	if err != nil {
		return false
	}
	gone := false
	rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		gone = unix.Fstat(int(fd), &st) == nil && st.Nlink == 0
	})
	return gone
}

// enterReplies enters replies/ of DIR, d (no link followed), with an
// O_PATH descriptor, and tells the key of a reply FIFO made there.
func enterReplies(d *sharedir.Dir) (*sharedir.Dir, replyKey, error) {
	dir := d.Path()
	replies, err := d.EnterSub("replies")
	if errors.Is(err, os.ErrNotExist) {
		return nil, replyKey{}, fmt.Errorf("%w in %s: make reply FIFO: %s has no replies/ directory", ErrNoAgent, dir, dir)
	}
	if err != nil {
		return nil, replyKey{}, err
	}
	var dst, rst unix.Stat_t
	if err := errors.Join(unix.Fstat(d.Fd(), &dst), unix.Fstat(replies.Fd(), &rst)); err != nil {
		replies.Close()
		return nil, replyKey{}, fmt.Errorf("stat %s: %w", replies.Path(), err)
	}
	key, err := newReplyKey(dir, &dst, &rst)
	if err != nil {
		replies.Close()
		return nil, replyKey{}, err
	}
	return replies, key, nil
}

// dropKeeper closes the keeper write end: from now on EOF shows that the
// agent closed its write end.
func (p *replyFIFO) dropKeeper() {
	if p.keeper != nil {
		p.keeper.Close()
		p.keeper = nil
	}
}

// restoreKeeper opens the keeper write end again after a turn that ended
// with its last frame (an Asker's): the next turn's frames wait in the
// queue as the first did, with no EOF from the agent's write end of the
// turn before. A FIFO that lost its name (the agent could not open it)
// is ErrUnanswerable.
func (p *replyFIFO) restoreKeeper() error {
	if p.keeper != nil {
		return nil
	}
	if err := p.lost(); err != nil {
		return err
	}
	k, err := fifo.OpenWriterNowAt(p.dir, p.name)
	if err != nil {
		return err
	}
	p.keeper = k
	return nil
}

// unserved removes the FIFO's name, so that no agent opens it from now
// on, closes the keeper, and says whether the request was never served:
// nothing was written to the FIFO and no write end of it is left open
// (its read end polls POLLHUP). The agent holds a reply FIFO open from
// the start of a request's turn to its last frame, and checks, once it
// has opened one, that its name still names it: a request whose FIFO it
// did not hold when the name went will never begin. Where the agent
// holds it (a turn under way, or an ask it is still taking in) unserved
// says false. Call it once the request's frames are no longer read.
func (p *replyFIFO) unserved() bool {
	p.unlink()
	p.dropKeeper()
	if p.written() {
		return false
	}
	revents, ok := p.poll()
	return ok && revents&(unix.POLLIN|unix.POLLHUP) == unix.POLLHUP
}

// agentHolds says whether a write end other than the keeper holds the
// FIFO and nothing waits in it: after a turn that ended with its last
// frame, the agent that answered it still keeps the FIFO for the next ask
// (it keeps only the last asker's, and only an agent that read an ask of
// this FIFO can hold it). False while the keeper is open, since its own
// write end hides the agent's.
func (p *replyFIFO) agentHolds() bool {
	if p.keeper != nil {
		return false
	}
	revents, ok := p.poll()
	return ok && revents == 0
}

// poll polls the read end for POLLIN without waiting, and returns what it
// says (POLLHUP: no write end is open).
func (p *replyFIFO) poll() (int16, bool) {
	rc, err := p.r.SyscallConn()
	if err != nil {
		return 0, false
	}
	fds := []unix.PollFd{{Events: unix.POLLIN}}
	n := 0
	cerr := rc.Control(func(fd uintptr) {
		fds[0].Fd = int32(fd)
		for {
			if n, err = unix.Poll(fds, 0); err != unix.EINTR {
				return
			}
		}
	})
	if cerr != nil || err != nil {
		return 0, false
	}
	if n == 0 {
		return 0, true
	}
	return fds[0].Revents, true
}

// unlink removes the FIFO's name, once.
func (p *replyFIFO) unlink() {
	if !p.removed {
		p.removed = true
		fifo.RemoveAt(p.dir, p.name) // unlinkat in the directory first opened
	}
}

// remove closes both ends and removes the FIFO.
func (p *replyFIFO) remove() {
	p.dropKeeper()
	if p.r != nil {
		p.r.Close()
	}
	p.unlink()
	p.dir.Close()
}
