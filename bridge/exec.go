package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
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

	slots  chan struct{} // one token per running child
	nextID atomic.Uint64

	accepted, rejected, completed, starts atomic.Uint64
	active                                atomic.Int64

	mu      sync.Mutex
	running map[*child.Process]bool
	last    *LastExit
	ctx     context.Context // of run; done means stopping
}

func newExecMode(cfg *Config, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink, poke func()) *execMode {
	return &execMode{
		cfg: cfg, reaper: reaper, src: src, sink: sink, poke: poke,
		replies: filepath.Join(cfg.Dir, "replies"),
		slots:   make(chan struct{}, cfg.MaxConcurrent),
		running: make(map[*child.Process]bool),
	}
}

// run serves requests until ctx is done; then every running request is
// stopped and gets its exit frame before run returns. It closes src and sink.
func (e *execMode) run(ctx context.Context) (child.ExitStatus, error) {
	e.mu.Lock()
	e.ctx = ctx
	e.mu.Unlock()
	var requests, loops sync.WaitGroup
	loops.Add(2)
	go func() { defer loops.Done(); e.serve(ctx, &requests) }()
	go func() { defer loops.Done(); e.forward(ctx) }()
	<-ctx.Done()
	e.cfg.Log.Info("stopping: no new requests; stopping running ones")
	e.src.Close() // wakes serve's Read
	loops.Wait()
	requests.Wait()
	e.sink.Close()
	return child.ExitStatus{}, nil
}

// serve reads request lines and starts each, waiting for a free slot first.
func (e *execMode) serve(ctx context.Context, requests *sync.WaitGroup) {
	lines := newLineReader(e.src, e.cfg.MaxRequest)
	for {
		line, err := lines.next()
		var tooLong errTooLong
		if errors.As(err, &tooLong) {
			id, name := salvageHead(tooLong.head)
			if id == "" {
				id = e.newID()
			}
			var reply *os.File
			if ValidReplyName(name) {
				reply, _ = e.openReply(name)
			}
			e.reject(id, reply, err)
			continue
		}
		if err != nil {
			return // the Source was closed: stopping
		}
		req, err := parseRequest(line)
		if req.ID == "" {
			req.ID = e.newID()
		}
		// Even a request that is refused is answered on its reply FIFO
		// when it names a usable one: that is where its sender listens.
		var reply *os.File
		if req.Reply != "" && ValidReplyName(req.Reply) {
			var rerr error
			reply, rerr = e.openReply(req.Reply)
			if err == nil {
				err = rerr
			}
		}
		if err == nil && len(req.Args) > 0 && !e.cfg.AllowArgs {
			err = errors.New("args given but the agent runs without -allow-args")
		}
		if err != nil {
			e.reject(req.ID, reply, err)
			continue
		}
		select {
		case e.slots <- struct{}{}:
		case <-ctx.Done():
			e.reject(req.ID, reply, errors.New("agent is stopping"))
			return
		}
		requests.Add(1)
		go func() {
			defer requests.Done()
			defer func() { <-e.slots }()
			e.handle(ctx, req, reply)
		}()
	}
}

func (e *execMode) newID() string { return "r" + strconv.FormatUint(e.nextID.Add(1), 10) }

// reject answers a request that will not run with one error frame, on its
// reply FIFO when it named a usable one, else on the output FIFO.
func (e *execMode) reject(id string, reply *os.File, err error) {
	e.rejected.Add(1)
	e.cfg.Log.Warn("request rejected", "id", id, "err", err)
	frame := appendErrorFrame(nil, id, err.Error())
	if reply != nil {
		e.writeReply(reply, frame)
		reply.Close()
	} else {
		e.sink.Write(frame)
	}
	e.poke()
}

// writeReply writes to a reply FIFO, giving up when its reader does not take
// the bytes within the stop timeout (a reader that went away).
func (e *execMode) writeReply(reply *os.File, b []byte) error {
	reply.SetWriteDeadline(time.Now().Add(max(e.cfg.StopTimeout, time.Second)))
	_, err := reply.Write(b)
	reply.SetWriteDeadline(time.Time{})
	return err
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
	return f, nil
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
func (e *execMode) snapshot() Status {
	st := Status{State: string(child.StateRunning)}
	e.mu.Lock()
	if e.ctx != nil && e.ctx.Err() != nil {
		st.State = string(child.StateStopping)
	}
	st.Child.LastExit = e.last
	e.mu.Unlock()
	st.Child.Starts = int(e.starts.Load())
	st.Requests = Requests{
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
		o.once.Do(func() { close(o.gone) })
	}
}
