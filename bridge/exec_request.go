package bridge

import (
	"context"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
	"os"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"golang.org/x/sys/unix"
)

// handle runs one accepted request to its end: start frame, output frames,
// exactly one exit frame (or one error frame if the program cannot start),
// and its whole tree gone.
func (e *execMode) handle(ctx context.Context, req protocol.Parsed, reply *os.File) {
	cfg := e.cfg
	out := &output{e: e, reply: reply, gone: make(chan struct{})}
	if reply != nil {
		defer e.closeReply(reply)
		// A reader that leaves shows at once, even while the child is quiet.
		done := make(chan struct{})
		watched := make(chan struct{})
		go func() { defer close(watched); watchReader(reply, done, out.markGone) }()
		defer func() { close(done); <-watched }()
	}

	var ends []*os.File // every pipe end, closed when done
	defer func() {
		for _, f := range ends {
			f.Close()
		}
	}()
	var childEnds [3]*os.File
	var agentEnds [3]*os.File
	for i := range 3 {
		a, c, err := pipe(i != 0)
		if err != nil {
			e.rejectStarted(req.ID, out, err)
			return
		}
		ends = append(ends, a, c)
		agentEnds[i], childEnds[i] = a, c
	}
	spec := cfg.spec()
	spec.Path = e.path
	spec.Args = append(append([]string(nil), cfg.Args...), req.Args...)
	spec.Stdin, spec.Stdout, spec.Stderr = childEnds[0], childEnds[1], childEnds[2]
	p, err := e.reaper.Start(spec)
	for _, c := range childEnds {
		c.Close() // only the child holds them now: EOF and EPIPE work
	}
	if err != nil {
		e.rejectStarted(req.ID, out, err)
		return
	}
	begin := time.Now()
	e.started(p)
	defer e.finished(p)
	out.write(protocol.AppendStart(nil, req.ID, p.Pid))

	var wg sync.WaitGroup
	if len(req.Stdin) <= smallStdin {
		agentEnds[0].Write(req.Stdin) // fits in the empty pipe: never waits
		agentEnds[0].Close()
	} else {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agentEnds[0].Write(req.Stdin) // fails when the child exits unread
			agentEnds[0].Close()
		}()
	}
	wg.Add(2)
	go func() { defer wg.Done(); pump(out, req.ID, protocol.FrameStdout, agentEnds[1]) }()
	go func() { defer wg.Done(); pump(out, req.ID, protocol.FrameStderr, agentEnds[2]) }()

	limit := req.Limit
	if limit == 0 {
		limit = cfg.Timeout
	}
	var expired <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		expired = t.C
	}
	timedOut := false
	select {
	case <-p.Done():
	case <-expired:
		timedOut = true
		cfg.Log.Info("request timed out", "id", req.ID, "pid", p.Pid, "timeout", limit)
		e.reaper.Stop(p, cfg.StopSignal, cfg.StopTimeout)
	case <-ctx.Done():
		e.reaper.Stop(p, cfg.StopSignal, cfg.StopTimeout)
	case <-out.gone:
		cfg.Log.Info("reply reader went away; stopping the request", "id", req.ID, "pid", p.Pid)
		e.reaper.Stop(p, cfg.StopSignal, cfg.StopTimeout)
	}
	st := p.Status()
	duration := time.Since(begin)

	// The child is gone: what it wrote is in the pipes. Take that, and do
	// not wait for a grandchild that still holds them.
	past := time.Unix(1, 0)
	for _, a := range agentEnds {
		a.SetDeadline(past)
	}
	wg.Wait()
	out.write(protocol.AppendExit(nil, req.ID, protocol.Exit{Code: st.Code(), Signal: child.SignalName(st.Signal()), TimedOut: timedOut, DurationMS: duration.Milliseconds()}))
	e.recordExit(st)
	e.reaper.Stop(p, cfg.StopSignal, cfg.StopTimeout) // the rest of its tree
}

// smallStdin is the most stdin an empty pipe takes in one write (its
// default capacity): written inline, it needs no goroutine.
const smallStdin = 64 << 10

// pump turns what the child writes to f into frames of type typ until f ends
// or its deadline passes; then it takes what is still buffered and returns.
// A UTF-8 character cut between two reads is sent whole.
func pump(out *output, id, typ string, f *os.File) {
	buf := make([]byte, 64<<10)
	var frame []byte
	held := 0 // bytes of a cut character kept at the start of buf
	send := func(data []byte, final bool) {
		whole, rest := data, []byte(nil)
		if !final {
			whole, rest = protocol.CutIncompleteRune(data)
		}
		if len(whole) > 0 {
			frame = protocol.AppendData(frame[:0], id, typ, whole)
			out.write(frame)
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

func (e *execMode) rejectStarted(id string, out *output, err error) {
	e.rejected.Add(1)
	e.cfg.Log.Warn("request rejected", "id", id, "err", err)
	out.write(protocol.AppendError(nil, id, err.Error()))
	e.poke()
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

func (e *execMode) finished(p *child.Process) {
	e.mu.Lock()
	delete(e.running, p)
	e.mu.Unlock()
	e.active.Add(-1)
	e.completed.Add(1)
	e.poke()
}

func (e *execMode) recordExit(st child.ExitStatus) {
	e.mu.Lock()
	e.last = &status.LastExit{Code: st.Code(), Signal: child.SignalName(st.Signal()), At: time.Now().UTC()}
	e.mu.Unlock()
}

// watchReader calls gone when the reply FIFO f has no reader left: the write
// end of a pipe polls POLLERR then. It looks until done is closed.
func watchReader(f *os.File, done <-chan struct{}, gone func()) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	for {
		var revents int16
		rc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd)}}
			if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
				revents = fds[0].Revents
			}
		})
		if revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			gone()
			return
		}
		select {
		case <-done:
			return
		case <-time.After(readerCheck):
		}
	}
}

// readerCheck is how often a reply FIFO is checked for a reader.
const readerCheck = 100 * time.Millisecond
