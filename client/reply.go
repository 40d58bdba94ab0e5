package client

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fifobridge/fifobridge/fifo"
)

// replyFIFO is send's private reply FIFO in DIR/replies. It is read through
// a non-blocking read end; keeper, a write end of its own, stands in for the
// agent's until the agent shows it holds one (its first frame), so that the
// read end sees no EOF while the request waits in the queue. Once keeper is
// closed, EOF means the agent closed its write end: the request is over or
// the agent is gone.
type replyFIFO struct {
	name, path string
	dir        *fifo.Dir // DIR/replies, opened once: every operation on the FIFO goes through it
	r          *os.File
	keeper     *os.File
}

// makeReply makes a reply FIFO with a random name in DIR/replies, which the
// agent made, and opens both its ends.
func makeReply(dir string) (*replyFIFO, error) {
	name, err := randomName()
	if err != nil {
		return nil, err
	}
	replies, err := fifo.OpenDir(filepath.Join(dir, "replies"), false)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s: make reply FIFO: %s has no replies/ directory", ErrNoAgent, dir, dir)
	}
	if err != nil {
		return nil, err
	}
	p := &replyFIFO{name: name, path: replies.Join(name), dir: replies}
	created, err := replies.Make(name, 0o600)
	if err != nil || !created {
		replies.Close()
		if err == nil {
			err = fmt.Errorf("make reply FIFO %s: something else made it first", p.path)
		}
		return nil, err
	}
	if p.r, err = replies.OpenReaderNow(name); err != nil {
		p.remove()
		return nil, err
	}
	if p.keeper, err = replies.OpenWriterNow(name); err != nil {
		p.remove()
		return nil, err
	}
	return p, nil
}

// dropKeeper closes the keeper write end: from now on EOF shows that the
// agent closed its write end.
func (p *replyFIFO) dropKeeper() {
	if p.keeper != nil {
		p.keeper.Close()
		p.keeper = nil
	}
}

// remove closes both ends and removes the FIFO.
func (p *replyFIFO) remove() {
	p.dropKeeper()
	if p.r != nil {
		p.r.Close()
	}
	p.dir.RemoveFIFO(p.name) // unlinkat in the directory first opened
	p.dir.Close()
}
