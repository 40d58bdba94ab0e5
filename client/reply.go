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
	path := filepath.Join(dir, "replies", name)
	created, err := fifo.Make(path, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s: make reply FIFO: %s has no replies/ directory", ErrNoAgent, dir, dir)
	}
	if err != nil {
		return nil, err
	}
	if !created {
		return nil, fmt.Errorf("make reply FIFO %s: something else made it first", path)
	}
	p := &replyFIFO{name: name, path: path}
	if p.r, err = fifo.OpenReaderNow(path); err != nil {
		p.remove()
		return nil, err
	}
	if p.keeper, err = fifo.OpenWriterNow(path); err != nil {
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
	os.Remove(p.path)
}
