package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// serve reads request lines and starts each, waiting for a free slot first.
// When the Source is closed, the lines it had already read are refused.
func (e *execMode) serve(ctx context.Context, requests *sync.WaitGroup) {
	lines := protocol.NewLineReader(e.src, e.cfg.MaxRequest)
	for {
		line, err := lines.Next()
		var tooLong *protocol.TooLongError
		if err != nil && !errors.As(err, &tooLong) {
			break // the Source was closed: stopping
		}
		e.accept(ctx, line, err, requests)
	}
	e.mu.Lock()
	unread := e.unread
	e.mu.Unlock()
	for _, line := range protocol.SplitLines(append(lines.Rest(), unread...)) {
		e.accept(ctx, line, nil, requests)
	}
}

// accept handles one request line (or the *protocol.TooLongError that
// stands for one): it skips a blank line, and starts any other request or
// rejects it with one error frame. It never waits for a reader; it waits
// for a free slot, and for room in the rejection queue while the output
// FIFO's reader takes error frames.
func (e *execMode) accept(ctx context.Context, line []byte, err error, requests *sync.WaitGroup) {
	e.idle.enqueue() // queued until handle starts it, or refused here
	handed := false
	defer func() {
		if !handed {
			e.idle.dequeue()
		}
	}()
	var tooLong *protocol.TooLongError
	if err == nil && protocol.IsBlank(line) {
		return
	}
	var req protocol.Parsed
	if errors.As(err, &tooLong) {
		req.ID, req.Reply = protocol.SalvageHead(tooLong.Head)
	} else {
		// On error, req still names the id and reply it could read.
		req, err = protocol.ParseRequest(line)
	}
	if req.ID == "" {
		req.ID = e.newID()
	}
	// Even a request that is refused is answered on its reply FIFO when it
	// names a usable one: that is where its sender listens.
	var reply *os.File
	if req.Reply != "" {
		var rerr error
		reply, rerr = e.openReply(req.Reply)
		if err == nil {
			err = rerr
		}
	}
	if err == nil && len(req.Args) > 0 && !e.cfg.AllowArgs {
		err = errors.New("args given but the agent runs without -allow-args")
	}
	if err == nil {
		err = e.takeSlot(ctx)
	}
	if err != nil {
		e.reject(req.ID, reply, err)
		return
	}
	requests.Add(1)
	handed = true
	go func() {
		defer requests.Done()
		e.handle(ctx, req, reply, func() { <-e.slots })
	}()
}

// takeSlot waits for a free slot, unless the agent is stopping.
func (e *execMode) takeSlot(ctx context.Context) error {
	stopping := errors.New("agent is stopping")
	if ctx.Err() != nil {
		return stopping
	}
	select {
	case e.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return stopping
	}
}

func (e *execMode) newID() string { return "r" + strconv.FormatUint(e.nextID.Add(1), 10) }

// openReply opens DIR/replies/name for writing without waiting: a FIFO,
// never a link or another file, with a reader on it. Nothing is created or
// written when it is anything else.
func (e *execMode) openReply(name string) (*os.File, error) {
	path := filepath.Join(e.replies, name)
	f, err := fifo.OpenWriterNow(path)
	if err != nil {
		return nil, fmt.Errorf("reply %q: %w", name, err)
	}
	// A hard link could make the input FIFO, or another client's reply
	// FIFO, a reply FIFO: only a FIFO with one name is one.
	if fi, err := f.Stat(); err != nil || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
		f.Close()
		return nil, fmt.Errorf("reply %q: %w: it has other names (hard links)", name, fifo.ErrNotFIFO)
	}
	return f, nil
}
