//go:build linux

package execmode

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
)

// request is one accepted request, from when a slot is free for it. It
// owns its child, the agent's ends of the child's pipes, its frames (and
// reply FIFO), and the goroutines that serve them: the two pumps, which
// also write its start and exit frames, a feeder for a large stdin, and
// the watch of its reply reader. Whoever made it waits for run, which
// returns only once every one of them is gone and every descriptor closed.
type request struct {
	e      *Engine
	req    protocol.Parsed
	cancel *cancel
	frames *frames

	p     *child.Process
	begin time.Time
	limit time.Duration
	timer *time.Timer // of limit, armed when the child started; nil: none
	// The agent's ends of the child's stdin, stdout and stderr pipes.
	stdin, stdout, stderr *os.File
	io                    sync.WaitGroup // the feeder and the pumps

	startWritten chan struct{} // the start frame was written or dropped
	stderrDone   chan struct{} // the stderr pump is done
	ended        chan struct{} // the child was reaped: x is set
	x            end
}

// end is how a request's child ended.
type end struct {
	status   child.ExitStatus
	timedOut bool
	canceled bool
	killed   bool // the stop escalated to SIGKILL or cgroup.kill
	duration time.Duration
}

// cancel ends one request early: its tree gets the stop sequence and its
// exit frame says canceled. A {"cancel":"ID"} line cancels it, and so do
// its reply reader leaving and its reader taking nothing for the patience.
type cancel struct {
	once   sync.Once
	done   chan struct{}
	reason string
}

func newCancel() *cancel { return &cancel{done: make(chan struct{})} }

// cancel cancels the request; the first reason given is the one logged.
func (c *cancel) cancel(reason string) {
	c.once.Do(func() { c.reason = reason; close(c.done) })
}

func (e *Engine) newRequest(p *pending) *request {
	return &request{e: e, req: p.req, cancel: p.cancel,
		frames:       newFrames(p.req.ID, p.reply, e.out, e.rule, e.cfg.Log, p.cancel.cancel),
		startWritten: make(chan struct{}), stderrDone: make(chan struct{}), ended: make(chan struct{})}
}

// run runs the request to its end: start frame, output frames, exactly one
// exit frame (or one error frame if the program cannot start), and its
// whole tree gone. Its time limit runs from the child's start, whatever
// happens to its frames; release frees its slot once its tree is gone,
// even while its frames still wait for a reader.
func (r *request) run(ctx context.Context, release func()) {
	e := r.e
	defer r.frames.close(e.closeReply)
	if err := r.start(); err != nil {
		e.queue.untrack(r.req.ID, r.cancel)
		release()
		e.rejected.Add(1)
		e.cfg.Log.Warn("request rejected", "id", r.req.ID, "err", err)
		r.frames.write(answer.ErrorFrame(r.req.ID, err))
		e.poke()
		return
	}
	if r.timer != nil {
		defer r.timer.Stop()
	}
	r.io.Add(2)
	go func() { defer r.io.Done(); r.pumpStdout() }()
	go func() { defer r.io.Done(); r.pumpStderr() }()
	r.feed()
	e.prepareCgroup(ctx)
	x := r.await(ctx)
	e.queue.untrack(r.req.ID, r.cancel) // a cancel from now on finds it finished
	r.finish(ctx, x, release)
}

// start makes the pipes, starts the child, and arms its time limit.
func (r *request) start() error {
	var agentEnds, childEnds [3]*os.File
	closeAll := func(ends [3]*os.File) {
		for _, f := range ends {
			if f != nil {
				f.Close()
			}
		}
	}
	for i := range 3 {
		ours, theirs, err := pipeio.Pipe(i != 0)
		if err != nil {
			closeAll(agentEnds)
			closeAll(childEnds)
			return err
		}
		agentEnds[i], childEnds[i] = ours, theirs
	}
	if len(r.req.Stdin) <= smallStdin {
		// Before the start, while the child's end is still open here,
		// the write cannot fail; after it, a child that exits without
		// reading (true) makes it fail with EPIPE, and a SIGPIPE goes
		// through the agent's signal relay for nothing.
		agentEnds[0].Write(r.req.Stdin) // fits in any empty pipe: never waits
		agentEnds[0].Close()
	}
	e := r.e
	spec := e.cfg.Child
	spec.Args = append(append([]string(nil), e.cfg.Child.Args...), r.req.Args...)
	spec.Stdin, spec.Stdout, spec.Stderr = childEnds[0], childEnds[1], childEnds[2]
	p, err := e.reaper.Start(spec)
	closeAll(childEnds) // only the child holds them now: EOF and EPIPE work
	if err != nil {
		closeAll(agentEnds)
		return err
	}
	r.p, r.begin = p, time.Now()
	r.stdin, r.stdout, r.stderr = agentEnds[0], agentEnds[1], agentEnds[2]
	if r.limit = r.req.Limit; r.limit == 0 {
		r.limit = e.cfg.Timeout
	}
	if r.limit > 0 {
		r.timer = time.NewTimer(r.limit)
	}
	e.started(p)
	return nil
}

// prepareCgroup makes the cgroup of the next request while this one's
// child runs, so that the next start does not wait for its mkdir; not
// once the agent stops.
func (e *Engine) prepareCgroup(ctx context.Context) {
	cg := e.cfg.Child.Cgroups
	if cg == nil || ctx.Err() != nil {
		return
	}
	if err := cg.Prepare(); err != nil {
		e.cfg.Log.Debug("cannot make the next request's cgroup ahead", "err", err)
	}
}

// await waits for the child to end: by itself, at its time limit, when it
// is canceled, or at a stop; in all but the first case it is stopped. It
// returns once the child is reaped.
func (r *request) await(ctx context.Context) end {
	e, p := r.e, r.p
	var expired <-chan time.Time
	if r.timer != nil {
		expired = r.timer.C
	}
	var x end
	select {
	case <-p.Done():
		x.status = p.Status()
	case <-expired:
		x.timedOut = true
		e.cfg.Log.Info("request timed out", "id", r.req.ID, "pid", p.Pid, "timeout", r.limit)
		x.status, x.killed = e.reaper.StopKilled(p, e.cfg.StopSignal, e.stopTimeout(ctx))
	case <-r.cancel.done:
		x.canceled = true
		e.cfg.Log.Info("request canceled; stopping it", "id", r.req.ID, "pid", p.Pid, "why", r.cancel.reason)
		x.status, x.killed = e.reaper.StopKilled(p, e.cfg.StopSignal, e.stopTimeout(ctx))
	case <-ctx.Done():
		x.status, x.killed = r.stopForAgent()
	}
	return x
}

// stopForAgent gives the child's tree the stop signal, SIGKILL if the
// child is still there when the stop escalates, and waits for it to be
// reaped at most halfway from then to the stop's deadline: on a loaded
// machine a killed process may take that long to run its exit, and one in
// uninterruptible sleep dies only when it leaves it. Its exit frame, which
// says KILL either way, then still reaches a reader; finish's Stop waits
// for the tree (package child warns about what survives SIGKILL). Every
// process of the tree is asked once (one scan of its cgroup or of /proc);
// finish's Stop does not ask them again, and cleans up what is left.
func (r *request) stopForAgent() (st child.ExitStatus, killed bool) {
	e, p := r.e, r.p
	killAt := e.rule.Stop()
	e.reaper.AskToStop(p, e.cfg.StopSignal)
	if e.reaper.AwaitAsked(p, killAt) { // warns about a child that ignores the signal
		return p.Status(), false
	}
	p.Signal(syscall.SIGKILL)
	t := time.NewTimer(time.Until(killAt.Add(bound.StopGrace / 2)))
	defer t.Stop()
	select {
	case <-p.Done():
		return p.Status(), true
	case <-t.C:
		e.cfg.Log.Info("stopping: the exit frame goes before the child killed with SIGKILL is reaped", "id", r.req.ID, "pid", p.Pid)
		return child.Signaled(syscall.SIGKILL), true
	}
}

// stopTimeout is how long a request's tree gets between the stop signal
// and SIGKILL: -stop-timeout, but no later than the agent's own stop.
func (e *Engine) stopTimeout(ctx context.Context) time.Duration {
	if ctx.Err() == nil {
		return e.cfg.StopTimeout
	}
	return max(time.Until(e.rule.Stop()), 0)
}

// finish ends a request whose child was reaped: its pumps take what is
// left in the pipes and the exit frame follows, while the rest of its
// tree is stopped and then its slot freed. A grandchild that keeps the
// pipes open holds neither the exit frame nor the slot past its stop.
func (r *request) finish(ctx context.Context, x end, release func()) {
	e := r.e
	x.duration = time.Since(r.begin)
	r.x = x
	close(r.ended)
	past := time.Unix(1, 0)
	for _, f := range []*os.File{r.stdin, r.stdout, r.stderr} {
		f.SetDeadline(past)
	}
	e.recordExit(x.status)
	e.reaper.Stop(r.p, e.cfg.StopSignal, e.stopTimeout(ctx))
	e.finished(r.p)
	release()
	r.io.Wait()
	r.stdout.Close()
	r.stderr.Close()
}

func (e *Engine) started(p *child.Process) {
	e.accepted.Add(1)
	e.starts.Add(1)
	e.active.Add(1)
	e.mu.Lock()
	e.running[p] = true
	e.mu.Unlock()
	e.poke()
}

// finished counts a request whose tree is gone.
func (e *Engine) finished(p *child.Process) {
	e.mu.Lock()
	delete(e.running, p)
	e.mu.Unlock()
	e.active.Add(-1)
	e.idle.Touch()
	e.completed.Add(1)
	e.poke()
}

func (e *Engine) recordExit(st child.ExitStatus) {
	e.mu.Lock()
	e.last = &status.LastExit{Code: st.Code(), Signal: child.SignalName(st.Signal()), At: time.Now().UTC()}
	e.mu.Unlock()
}
