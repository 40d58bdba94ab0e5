package bridge

import (
	"context"
	"errors"
	"fmt"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
)

// execMode is exec mode: one child per request line, at most MaxConcurrent
// at once; further requests wait on the input FIFO in arrival order.
type execMode struct {
	cfg     *Config
	reaper  *child.Reaper
	src     *fifo.Source
	sink    *fifo.Sink
	replies string // DIR/replies
	poke    func()

	path   string        // PROGRAM looked up in PATH, or ""
	slots  chan struct{} // one token per running child
	nextID atomic.Uint64

	accepted, rejected, completed, starts atomic.Uint64
	active                                atomic.Int64

	rejections chan []byte // error frames for the output FIFO

	mu         sync.Mutex
	running    map[*child.Process]bool
	replyFiles map[*os.File]struct{} // open reply FIFOs, given up at stop
	last       *status.LastExit
	ctx        context.Context // of run; done means stopping
	unread     []byte          // left in the input FIFO at stop
}

func newExecMode(cfg *Config, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink, poke func()) *execMode {
	// The program is looked up in PATH once, not for every request; a
	// lookup that fails now is tried again per request, for its error frame.
	path, _ := exec.LookPath(cfg.Program)
	return &execMode{
		path: path,
		cfg:  cfg, reaper: reaper, src: src, sink: sink, poke: poke,
		replies:    filepath.Join(cfg.Dir, "replies"),
		slots:      make(chan struct{}, cfg.MaxConcurrent),
		running:    make(map[*child.Process]bool),
		replyFiles: make(map[*os.File]struct{}),
		rejections: make(chan []byte, rejectionQueue),
	}
}

// run serves requests until ctx is done; then every running request is
// stopped and gets its exit frame, and every request line already read gets
// an error frame, before run returns. A stop never waits on readers: after
// the stop timeout and half a second, the output FIFO and reply FIFOs are
// given up. It closes src and sink.
func (e *execMode) run(ctx context.Context) (child.ExitStatus, error) {
	e.mu.Lock()
	e.ctx = ctx
	e.mu.Unlock()
	var requests, loops, writer sync.WaitGroup
	loops.Add(2)
	go func() { defer loops.Done(); e.serve(ctx, &requests) }()
	go func() { defer loops.Done(); e.forward(ctx) }()
	writer.Add(1)
	go func() { defer writer.Done(); e.writeRejections() }()
	<-ctx.Done()
	e.cfg.Log.Info("stopping: no new requests; stopping running ones")
	finished := make(chan struct{})
	writer.Add(1)
	go func() { defer writer.Done(); e.giveUpAfter(e.cfg.StopTimeout+flushGrace, finished) }()
	// serve wakes when the Source closes and then takes unread, so it is
	// set before the lock is let go.
	e.mu.Lock()
	e.unread, _ = e.src.CloseDrain()
	e.mu.Unlock()
	loops.Wait()
	requests.Wait()
	close(finished)
	close(e.rejections)
	writer.Wait()
	e.sink.Close()
	return child.ExitStatus{}, nil
}

// giveUpAfter closes the output FIFO and wakes writes to reply FIFOs once
// d has passed, unless finished is closed first: from then on, frames no
// reader takes are dropped, so that a stop never waits on readers.
func (e *execMode) giveUpAfter(d time.Duration, finished <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-finished:
		return
	case <-t.C:
	}
	e.cfg.Log.Warn("stopping: giving up on frames no reader takes")
	e.sink.Close()
	e.mu.Lock()
	for f := range e.replyFiles {
		f.SetWriteDeadline(time.Unix(1, 0))
	}
	e.mu.Unlock()
}

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

// accept handles one request line (or the errTooLong that stands for one):
// it starts the request or rejects it with one error frame.
func (e *execMode) accept(ctx context.Context, line []byte, err error, requests *sync.WaitGroup) {
	var req protocol.Parsed
	var tooLong *protocol.TooLongError
	if errors.As(err, &tooLong) {
		req.ID, req.Reply = protocol.SalvageHead(tooLong.Head)
	} else if err == nil {
		req, err = protocol.ParseRequest(line)
	}
	if req.ID == "" {
		req.ID = e.newID()
	}
	// Even a request that is refused is answered on its reply FIFO when it
	// names a usable one: that is where its sender listens.
	var reply *os.File
	if req.Reply != "" && protocol.ValidReplyName(req.Reply) {
		var rerr error
		reply, rerr = e.openReply(req.Reply)
		if err == nil {
			err = rerr
		}
	}
	if err == nil && len(req.Args) > 0 && !e.cfg.AllowArgs {
		err = errors.New("args given but the agent runs without -allow-args")
	}
	if err == nil && ctx.Err() != nil {
		err = errors.New("agent is stopping")
	}
	if err == nil {
		select {
		case e.slots <- struct{}{}:
		case <-ctx.Done():
			err = errors.New("agent is stopping")
		}
	}
	if err != nil {
		e.reject(req.ID, reply, err)
		return
	}
	requests.Add(1)
	go func() {
		defer requests.Done()
		defer func() { <-e.slots }()
		e.handle(ctx, req, reply)
	}()
}

func (e *execMode) newID() string { return "r" + strconv.FormatUint(e.nextID.Add(1), 10) }

// rejectionQueue bounds the error frames waiting for the output FIFO; past
// it they are dropped (and logged), so that bad input nobody reads the
// answers to never stops the agent from reading requests.
const rejectionQueue = 256

// reject answers a request that will not run with one error frame: on its
// reply FIFO when it named a usable one, else on the output FIFO, through a
// queue, without waiting for a reader.
func (e *execMode) reject(id string, reply *os.File, err error) {
	e.rejected.Add(1)
	e.cfg.Log.Warn("request rejected", "id", id, "err", err)
	frame := protocol.AppendError(nil, id, err.Error())
	defer e.poke()
	if reply != nil {
		reply.SetWriteDeadline(time.Now().Add(max(e.cfg.StopTimeout, time.Second)))
		reply.Write(frame)
		e.closeReply(reply)
		return
	}
	select {
	case e.rejections <- frame:
	default:
		e.cfg.Log.Warn("error frame dropped: nobody reads the output FIFO", "id", id)
	}
}

// writeRejections writes queued error frames to the output FIFO until the
// queue is closed.
func (e *execMode) writeRejections() {
	for frame := range e.rejections {
		e.sink.Write(frame)
	}
}

// openReply opens DIR/replies/name for writing: a FIFO, never a link or
// another file, with a reader waiting on it. Nothing is created or written
// when it is anything else.
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
	e.mu.Lock()
	e.replyFiles[f] = struct{}{}
	e.mu.Unlock()
	return f, nil
}

func (e *execMode) closeReply(f *os.File) {
	e.mu.Lock()
	delete(e.replyFiles, f)
	e.mu.Unlock()
	f.Close()
}

// forward passes signals to every running child's process group.
func (e *execMode) forward(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-e.cfg.Forward:
			e.mu.Lock()
			for p := range e.running {
				p.Signal(sig.(syscall.Signal))
			}
			e.mu.Unlock()
		}
	}
}

// snapshot is exec mode's part of the status file.
func (e *execMode) snapshot() status.Status {
	st := status.Status{State: string(child.StateRunning)}
	e.mu.Lock()
	if e.ctx != nil && e.ctx.Err() != nil {
		st.State = string(child.StateStopping)
	}
	st.Child.LastExit = e.last
	e.mu.Unlock()
	st.Child.Starts = int(e.starts.Load())
	st.Requests = status.Requests{
		Accepted:  e.accepted.Load(),
		Rejected:  e.rejected.Load(),
		Active:    e.active.Load(),
		Completed: e.completed.Load(),
	}
	return st
}

// output is where one request's frames go, one frame at a time.
type output struct {
	mu    sync.Mutex
	e     *execMode
	reply *os.File // nil: the output FIFO
	gone  chan struct{}
	once  sync.Once
}

// write writes one frame. When the reply FIFO's reader is gone, the request
// is cancelled through gone.
func (o *output) write(frame []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var err error
	if o.reply != nil {
		_, err = o.reply.Write(frame)
	} else {
		_, err = o.e.sink.Write(frame)
	}
	if err != nil {
		o.markGone()
	}
}

// markGone says the request's reader is gone: the request is stopped.
func (o *output) markGone() { o.once.Do(func() { close(o.gone) }) }
