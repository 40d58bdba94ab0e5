package bridge

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
)

// request is one accepted request whose child runs.
type request struct {
	req    protocol.Parsed
	out    *output
	cancel *cancel
	p      *child.Process
	begin  time.Time
	limit  time.Duration
	timer  *time.Timer // of limit, armed when the child started; nil: none
	// The agent's ends of the child's stdin, stdout and stderr pipes.
	stdin, stdout, stderr *os.File
	io                    sync.WaitGroup // the stdin feeder and the pumps
}

// end is how a request's child ended.
type end struct {
	status   child.ExitStatus
	timedOut bool
	canceled bool
	killed   bool // the stop escalated to SIGKILL or cgroup.kill
}

// cancel ends one request early: its tree gets the stop sequence and its
// exit frame says canceled. A {"cancel":"ID"} line cancels it, and so does
// its reply reader leaving.
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

// handle runs one accepted request to its end: start frame, output frames,
// exactly one exit frame (or one error frame if the program cannot start),
// and its whole tree gone. Its time limit runs from the child's start,
// whatever happens to its frames; release frees its slot once its tree is
// gone, even while its frames still wait for a reader.
func (e *execMode) handle(ctx context.Context, p *pending, release func()) {
	req, c := p.req, p.cancel
	out := e.newOutput(req.ID, p.reply, c.cancel)
	defer out.close()
	r, err := e.start(req, out, c)
	if err != nil {
		e.untrack(req.ID, c)
		release()
		e.rejectStarted(req.ID, out, err)
		return
	}
	if r.timer != nil {
		defer r.timer.Stop()
	}
	out.send(protocol.AppendStart(nil, req.ID, r.p.Pid)) // the first frame: never waits
	r.feed()
	r.pump()
	end := e.await(ctx, r)
	e.untrack(req.ID, c) // a cancel from now on finds it finished
	e.finish(ctx, r, end, release)
}

// start makes the pipes, starts the child, and arms its time limit.
func (e *execMode) start(req protocol.Parsed, out *output, c *cancel) (*request, error) {
	var agentEnds, childEnds [3]*os.File
	closeAll := func(ends [3]*os.File) {
		for _, f := range ends {
			if f != nil {
				f.Close()
			}
		}
	}
	for i := range 3 {
		ours, theirs, err := pipe(i != 0)
		if err != nil {
			closeAll(agentEnds)
			closeAll(childEnds)
			return nil, err
		}
		agentEnds[i], childEnds[i] = ours, theirs
	}
	if len(req.Stdin) <= smallStdin {
		// Before the start, while the child's end is still open here,
		// the write cannot fail; after it, a child that exits without
		// reading (true) makes it fail with EPIPE, and a SIGPIPE goes
		// through the agent's signal relay for nothing.
		agentEnds[0].Write(req.Stdin) // fits in any empty pipe: never waits
		agentEnds[0].Close()
	}
	spec := e.cfg.spec()
	spec.Path = e.path
	spec.Args = append(append([]string(nil), e.cfg.Args...), req.Args...)
	spec.Stdin, spec.Stdout, spec.Stderr = childEnds[0], childEnds[1], childEnds[2]
	p, err := e.reaper.Start(spec)
	closeAll(childEnds) // only the child holds them now: EOF and EPIPE work
	if err != nil {
		closeAll(agentEnds)
		return nil, err
	}
	r := &request{req: req, out: out, cancel: c, p: p, begin: time.Now(),
		stdin: agentEnds[0], stdout: agentEnds[1], stderr: agentEnds[2]}
	r.limit = req.Limit
	if r.limit == 0 {
		r.limit = e.cfg.Timeout
	}
	if r.limit > 0 {
		r.timer = time.NewTimer(r.limit)
	}
	e.started(p)
	return r, nil
}

// smallStdin is the most stdin written inline, without a goroutine: an
// empty pipe always takes PIPE_BUF bytes at once, even one the kernel gave
// a single page because the user has too many pipe pages (its default 64
// KiB is not guaranteed).
const smallStdin = 4096

// feed writes the request's stdin to the child and closes it, unless
// start did, which it does with small ones.
func (r *request) feed() {
	if len(r.req.Stdin) <= smallStdin {
		return
	}
	r.io.Add(1)
	go func() {
		defer r.io.Done()
		r.stdin.Write(r.req.Stdin) // fails when the child exits unread, or at drain
		r.stdin.Close()
	}()
}

// pump turns the child's stdout and stderr into frames until drain.
func (r *request) pump() {
	r.io.Add(2)
	go func() { defer r.io.Done(); pump(r.out, r.req.ID, protocol.FrameStdout, r.stdout) }()
	go func() { defer r.io.Done(); pump(r.out, r.req.ID, protocol.FrameStderr, r.stderr) }()
}

// await waits for the child to end: by itself, at its time limit, when it
// is canceled, or at a stop; in all but the first case it is stopped. It
// returns once the child is reaped.
func (e *execMode) await(ctx context.Context, r *request) end {
	cfg, p := e.cfg, r.p
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
		cfg.Log.Info("request timed out", "id", r.req.ID, "pid", p.Pid, "timeout", r.limit)
		x.status, x.killed = e.reaper.StopKilled(p, cfg.StopSignal, e.stopTimeout(ctx))
	case <-r.cancel.done:
		x.canceled = true
		cfg.Log.Info("request canceled; stopping it", "id", r.req.ID, "pid", p.Pid, "why", r.cancel.reason)
		x.status, x.killed = e.reaper.StopKilled(p, cfg.StopSignal, e.stopTimeout(ctx))
	case <-ctx.Done():
		x.status, x.killed = e.stopForAgent(p)
	}
	return x
}

// killWait is how long a stopping agent waits for a SIGKILLed child to be
// reaped before it gives up on it (a process in uninterruptible sleep dies
// only when it leaves it): its exit frame then says KILL.
const killWait = 500 * time.Millisecond

// stopForAgent gives the child's tree the stop signal and, if the child
// is still there at the stop's deadline, SIGKILL; it returns its
// status once it is reaped, or after killWait more. Every process of the
// tree is asked once (one scan of its cgroup or of /proc); finish's Stop
// does not ask them again, and cleans up what is left.
func (e *execMode) stopForAgent(p *child.Process) (st child.ExitStatus, killed bool) {
	e.reaper.AskToStop(p, e.cfg.StopSignal)
	t := time.NewTimer(time.Until(e.stopDeadline()))
	defer t.Stop()
	select {
	case <-p.Done():
		return p.Status(), false
	case <-t.C:
	}
	p.Signal(syscall.SIGKILL)
	t.Reset(killWait)
	select {
	case <-p.Done():
		return p.Status(), true
	case <-t.C:
		e.cfg.Log.Warn("stopping: giving up on a request's child that survives SIGKILL", "id", "", "pid", p.Pid)
		return child.Signaled(syscall.SIGKILL), true
	}
}

// stopTimeout is how long a request's tree gets between the stop signal
// and SIGKILL: -stop-timeout, but no later than the agent's own stop.
func (e *execMode) stopTimeout(ctx context.Context) time.Duration {
	if ctx.Err() == nil {
		return e.cfg.StopTimeout
	}
	return max(time.Until(e.stopDeadline()), 0)
}

// finish ends a request whose child was reaped: the rest of its tree is
// stopped (and then its slot freed) while its output is taken from the
// pipes and the exit frame follows it. A grandchild that keeps the pipes
// open does not hold the exit frame.
func (e *execMode) finish(ctx context.Context, r *request, x end, release func()) {
	r.out.ended()
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		e.reaper.Stop(r.p, e.cfg.StopSignal, e.stopTimeout(ctx))
		e.finished(r.p)
		release()
	}()
	duration := time.Since(r.begin)
	past := time.Unix(1, 0)
	for _, f := range []*os.File{r.stdin, r.stdout, r.stderr} {
		f.SetDeadline(past)
	}
	r.io.Wait()
	r.stdout.Close()
	r.stderr.Close()
	st := x.status
	r.out.send(protocol.AppendExit(nil, r.req.ID, protocol.Exit{Code: st.Code(),
		Signal: child.SignalName(st.Signal()), TimedOut: x.timedOut, Canceled: x.canceled, Killed: x.killed, DurationMS: duration.Milliseconds()}))
	e.recordExit(st)
	<-gone
}

// pumpBuffers keeps pump's buffers from one request to the next: two of
// 64 KiB per request, which would otherwise be zeroed for every one and
// make the collector run every few dozen requests. Frames copy what they
// send, so nothing of a buffer outlives its pump.
var pumpBuffers = sync.Pool{New: func() any { return new([64 << 10]byte) }}

// pump turns what the child writes to f into frames of type typ until f ends
// or its deadline passes; then it takes what is still buffered and returns.
// A UTF-8 character cut between two reads is sent whole.
func pump(out *output, id, typ string, f *os.File) {
	b := pumpBuffers.Get().(*[64 << 10]byte)
	defer pumpBuffers.Put(b)
	buf := b[:]
	held := 0 // bytes of a cut character kept at the start of buf
	send := func(data []byte, final bool) {
		whole, rest := data, []byte(nil)
		if !final {
			whole, rest = protocol.CutIncompleteRune(data)
		}
		if len(whole) > 0 {
			out.send(protocol.AppendData(nil, id, typ, whole))
		}
		held = copy(buf, rest)
	}
	for {
		n, err := f.Read(buf[held:])
		if n > 0 {
			send(buf[:held+n], false)
		}
		if err != nil {
			break
		}
	}
	left := fifo.Drain(f)
	send(append(buf[:held:held], left...), true)
}

func (e *execMode) started(p *child.Process) {
	e.accepted.Add(1)
	e.starts.Add(1)
	e.active.Add(1)
	e.mu.Lock()
	e.running[p] = true
	e.mu.Unlock()
	e.poke()
}

// finished counts a request whose tree is gone.
func (e *execMode) finished(p *child.Process) {
	e.mu.Lock()
	delete(e.running, p)
	e.mu.Unlock()
	e.active.Add(-1)
	e.idle.touch()
	e.completed.Add(1)
	e.poke()
}

func (e *execMode) recordExit(st child.ExitStatus) {
	e.mu.Lock()
	e.last = &status.LastExit{Code: st.Code(), Signal: child.SignalName(st.Signal()), At: time.Now().UTC()}
	e.mu.Unlock()
}
