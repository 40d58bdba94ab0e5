//go:build linux

package execmode

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/bridge/internal/idle"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// Engine is exec mode: one child per request line, at most MaxConcurrent
// at once; further requests wait in a queue of MaxConcurrent and then on
// the input FIFO, in arrival order (see queue.go).
//
// Who may block on what:
//
//   - The request loop (serve) reads lines, opens reply FIFOs without
//     waiting, and waits only for room in the queue of requests or, while
//     a reader takes error frames from the output FIFO, for room in the
//     rejection queue. The dispatcher waits for free slots.
//   - Each request (a request, run by a goroutine of the dispatcher's)
//     writes its own frames, so a reader that does not read holds up only
//     that request's frames, and through its full pipes its child, never
//     its time limit or the loop; and that for the patience at most, when
//     the request is given up.
//   - A slot is held while the request's tree lives, not while its frames
//     wait for a reader.
//   - How long a blocked write waits, while serving and at a stop, is
//     the rule's to say (package bound), and nobody else's.
type Engine struct {
	cfg     *Config
	reaper  *child.Reaper
	src     *fifo.Source
	out     *outFIFO
	rule    *bound.Rule   // when blocked writes are given up
	replies *sharedir.Dir // DIR/replies, or nil when there is none
	poke    func()

	slots  chan struct{} // one token per running tree
	nextID atomic.Uint64

	accepted, rejected, completed, starts atomic.Uint64
	active                                atomic.Int64

	rejections *rejectionQueue // error frames for the output FIFO
	idle       *idle.Clock     // requests queued, for -idle-timeout

	queue *requestQueue // waiting for a slot, and running by id

	mu      sync.Mutex
	running map[*child.Process]bool
	// replyNames counts, by name, the reply FIFOs open for requests that
	// are queued, running, or being answered: the sweep leaves them alone.
	replyNames map[string]int
	last       *status.LastExit
	ctx        context.Context // of run; done means stopping
	unread     []byte          // left in the input FIFO at stop
}

// New returns exec mode serving src and sink with cfg; poke is told
// whenever the status changed. Run serves.
func New(cfg *Config, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink, poke func()) *Engine {
	out := newOutFIFO(sink)
	return &Engine{
		cfg: cfg, reaper: reaper, src: src, out: out, poke: poke,
		rule:       bound.NewRule(cfg.StopTimeout),
		replies:    cfg.Replies,
		slots:      make(chan struct{}, cfg.MaxConcurrent),
		running:    make(map[*child.Process]bool),
		queue:      newRequestQueue(cfg.MaxConcurrent),
		replyNames: make(map[string]int),
		rejections: newRejectionQueue(out, rejectionQueueBytes, cfg.Log),
		idle:       idle.NewClock(),
	}
}

// Run serves requests until ctx is done. Then no request starts; each
// running one gets the stop sequence (its stop signal, SIGKILL at
// -stop-timeout) and its exit frame; each line already read gets an error
// frame. Frames that a reader takes are delivered; writes still under way
// at the stop's deadline (-stop-timeout plus bound.StopGrace) are given
// up. run
// returns when every request and writer is done, and closes src and the
// output FIFO.
func (e *Engine) Run(ctx context.Context) (child.ExitStatus, error) {
	// No request queued or running for -idle-timeout: a stop.
	ctx, stopIdle := e.idle.StopWhenIdle(ctx, e.cfg.IdleTimeout, e.cfg.Log, e.busy)
	defer stopIdle()
	e.mu.Lock()
	e.ctx = ctx
	e.mu.Unlock()
	var requests, loops, writer sync.WaitGroup
	loops.Add(4)
	go func() { defer loops.Done(); e.serve(ctx) }()
	go func() { defer loops.Done(); e.dispatch(ctx, &requests) }()
	go func() { defer loops.Done(); e.forward(ctx) }()
	go func() { defer loops.Done(); e.sweep(ctx) }()
	writer.Add(1)
	go func() { defer writer.Done(); e.rejections.run() }()
	<-ctx.Done()
	e.rule.Stop()
	e.cfg.Log.Info("stopping: no new requests; stopping running ones")

	finished := make(chan struct{})
	var giver sync.WaitGroup
	giver.Add(1)
	go func() { defer giver.Done(); e.rule.Expire(finished, e.giveUpOutput) }()
	// serve wakes when the Source closes and then takes unread, so it is
	// set before the lock is let go.
	e.mu.Lock()
	e.unread, _ = e.src.CloseDrain()
	e.mu.Unlock()
	loops.Wait()
	requests.Wait()
	e.rejections.close()
	writer.Wait()
	close(finished)
	giver.Wait()
	e.out.sink.Close()
	return child.ExitStatus{}, nil
}

// giveUpOutput is the stop's deadline for the output FIFO: it is closed,
// which gives up the frame in it and every one after, and error frames
// that find the rejection queue full are dropped.
func (e *Engine) giveUpOutput() {
	e.rejections.giveUp()
	if e.out.untaken() > 0 {
		e.cfg.Log.Warn("stopping: giving up on the output fifo: nobody takes what is left")
	}
	e.out.sink.Close()
}

// forward passes signals to every running child's process group.
func (e *Engine) forward(ctx context.Context) {
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

// Snapshot is exec mode's part of the status file.
func (e *Engine) Snapshot() status.Status {
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

// busy reports whether a request is queued or running, for -idle-timeout.
func (e *Engine) busy() bool {
	return e.queue.len() > 0 || e.active.Load() > 0
}
