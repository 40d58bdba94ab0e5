package bridge

import (
	"errors"
	"os"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"golang.org/x/sys/unix"
)

// outFIFO is the output FIFO as exec mode writes it: each frame whole, in
// one Sink.Write, and a record of whether writes make progress, which is
// how the agent tells whether a reader takes what it writes.
type outFIFO struct {
	sink *fifo.Sink

	mu       sync.Mutex
	waiting  int       // writes under way
	progress time.Time // when a write last finished, or the first began
}

// write writes one frame, waiting while the FIFO is full.
func (o *outFIFO) write(frame []byte) error {
	o.mu.Lock()
	if o.waiting == 0 {
		o.progress = time.Now()
	}
	o.waiting++
	o.mu.Unlock()
	_, err := o.sink.Write(frame)
	o.mu.Lock()
	o.waiting--
	o.progress = time.Now()
	o.mu.Unlock()
	return err
}

// blocked reports whether a write has waited d or longer with no write
// finishing meanwhile: nobody reads the FIFO, or its reader stalls.
func (o *outFIFO) blocked(d time.Duration) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waiting > 0 && time.Since(o.progress) >= d
}

// output is where one request's frames go: its reply FIFO or the output
// FIFO. A writer goroutine of its own writes them in order, so that a
// reader that does not read holds up this request's frames only. Once a
// write fails (the reply's reader left, a write was given up), the
// remaining frames are dropped, and send never waits again.
type output struct {
	e     *execMode
	id    string
	reply *fifo.Reply // nil: the output FIFO

	frames chan []byte
	done   chan struct{} // the writer returned
	left   chan struct{} // closed when a write failed or the reader left
	once   sync.Once
	cancel func(reason string) // cancels the request when its reply reader leaves

	watchDone chan struct{} // ends watchReader
	watched   chan struct{} // watchReader returned

	mu    sync.Mutex
	since time.Time // when the reply write under way began; zero if none

	endOnce sync.Once
	patient chan struct{} // closed when waitPatiently returned; nil: not started
}

// newOutput starts the writer of one request's frames; close waits for it.
// When the reader of its reply FIFO leaves, cancel is called.
func (e *execMode) newOutput(id string, reply *fifo.Reply, cancel func(reason string)) *output {
	o := &output{e: e, id: id, reply: reply, frames: make(chan []byte, 1),
		done: make(chan struct{}), left: make(chan struct{}), cancel: cancel}
	if reply != nil {
		e.mu.Lock()
		e.writers[o] = struct{}{}
		e.mu.Unlock()
		// A reader that leaves shows at once, even while the child is
		// quiet and nothing is written.
		o.watchDone, o.watched = make(chan struct{}), make(chan struct{})
		go func() { defer close(o.watched); watchReader(reply.File(), o.watchDone, o.readerGone) }()
	}
	go func() { defer close(o.done); o.run() }()
	return o
}

// send hands a frame to the writer: it waits while the writer is busy with
// the one before (backpressure), never once a write has failed. The first
// frame sent never waits.
func (o *output) send(frame []byte) {
	select {
	case o.frames <- frame:
	case <-o.left: // dropped: nobody takes it
	}
}

// close waits until every frame sent is written or dropped, and closes
// the reply FIFO. Like os/exec's WaitDelay, it does not wait forever for a
// reply reader that stays but does not read: a reply write blocked for the
// patience after the request ended is given up, and the rest dropped (see
// waitPatiently for the output FIFO).
func (o *output) close() {
	o.ended()
	close(o.frames)
	<-o.done
	if o.patient != nil {
		<-o.patient
	}
	if o.reply == nil {
		return
	}
	close(o.watchDone)
	<-o.watched
	o.e.mu.Lock()
	delete(o.e.writers, o)
	o.e.mu.Unlock()
	o.e.closeReply(o.reply)
}

// ended says the request's child has ended: from now on a reply write that
// blocks for its patience is given up. close calls it too.
func (o *output) ended() {
	o.endOnce.Do(func() {
		o.patient = make(chan struct{})
		go func() { defer close(o.patient); o.waitPatiently() }()
	})
}

// waitPatiently waits for the writer, giving up a reply write that blocks
// for the patience. On the output FIFO, which other requests share and
// which a stop closes, the write under way is left to wait for a reader,
// but the request's remaining frames are dropped, so that its pipes and
// pumps go: requests nobody reads the answers to do not pile up their
// descriptors.
func (o *output) waitPatiently() {
	patience := max(o.e.cfg.StopTimeout, replyPatienceMin)
	t := time.NewTicker(patience / 4)
	defer t.Stop()
	for {
		select {
		case <-o.done:
			return
		case <-t.C:
		}
		switch {
		case o.reply != nil && o.blocked(patience):
			o.e.cfg.Log.Warn("giving up on a reply fifo whose reader does not read", "id", o.id, "after", patience)
			o.giveUp()
			return
		case o.reply == nil && o.e.out.blocked(patience):
			o.e.cfg.Log.Warn("dropping the rest of a finished request's frames: nobody reads the output fifo", "id", o.id, "after", patience)
			o.markLeft("nobody reads the output fifo")
			return
		}
	}
}

// replyPatienceMin is the least time a reply write may block after its
// request ended before it is given up; the patience is -stop-timeout when
// that is longer.
const replyPatienceMin = time.Second

func (o *output) run() {
	for frame := range o.frames {
		select {
		case <-o.left:
			continue // dropped: nobody takes it
		default:
		}
		if err := o.write(frame); os.IsTimeout(err) {
			o.markLeft("its frames were given up")
		} else if errors.Is(err, fifo.ErrReplaced) {
			o.markLeft("its reply fifo was replaced or moved")
		} else if err != nil {
			o.markLeft("its reply reader went away")
		}
	}
}

func (o *output) write(frame []byte) error {
	if o.reply == nil {
		return o.e.out.write(frame)
	}
	o.mu.Lock()
	o.since = time.Now()
	o.mu.Unlock()
	_, err := o.reply.Write(frame)
	o.mu.Lock()
	o.since = time.Time{}
	o.mu.Unlock()
	return err
}

// markLeft says nobody takes this request's frames any more: the rest are
// dropped, and a request answered on its reply FIFO is canceled (the
// output FIFO's reader may come back; it fails only when given up).
func (o *output) markLeft(reason string) {
	o.once.Do(func() {
		close(o.left)
		if o.reply != nil {
			o.cancel(reason)
		}
	})
}

func (o *output) readerGone() { o.markLeft("its reply reader went away") }

// blocked reports whether a reply write has waited d or longer.
func (o *output) blocked(d time.Duration) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.since.IsZero() && time.Since(o.since) >= d
}

// giveUp wakes a blocked reply write, and any later one, with an error:
// the remaining frames are dropped.
func (o *output) giveUp() { o.reply.SetWriteDeadline(time.Unix(1, 0)) }

// watchReader calls gone when the reply FIFO f has no reader left: the write
// end of a pipe polls POLLERR then. It looks until done is closed.
func watchReader(f *os.File, done <-chan struct{}, gone func()) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	t := time.NewTicker(readerCheck)
	defer t.Stop()
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
		case <-t.C:
		}
	}
}

// readerCheck is how often a reply FIFO is checked for a reader.
const readerCheck = 100 * time.Millisecond

// writeNow writes frame, at most PIPE_BUF bytes, to the reply FIFO in one
// write(2) without waiting, if it is still the FIFO first opened: the
// kernel writes it whole or not at all. It fails with EAGAIN when the pipe
// is full.
func writeNow(r *fifo.Reply, frame []byte) error {
	if err := r.Check(); err != nil {
		return err
	}
	rc, err := r.File().SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	if err := rc.Control(func(fd uintptr) {
		for {
			_, werr = unix.Write(int(fd), frame)
			if werr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return werr
}
