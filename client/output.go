//go:build linux

package client

import (
	"context"
	"time"
)

// output makes the relay's writes to stdout and stderr abandonable. A write
// to a pipe whose reader stopped reading (`send ... | less`, `| (sleep 60)`)
// blocks in write(2), which neither a context nor a deadline can end
// (stdout is blocking, and its file status flags are shared with whoever
// else holds it, the shell included, so they are not changed here). So the
// relay hands each write to output's goroutine and waits for it or for its
// context, whichever comes first: a cancelled request (a signal, send's
// -timeout) ends at once however its stdout does.
//
// Writes are done one at a time, in the order handed over, and the relay
// hands over the next only when the one before is done: the frames keep
// their order across stdout and stderr, and while a write blocks the relay
// reads no more of the reply FIFO, so the agent's own backpressure holds
// and nothing piles up here.
//
// The goroutine is the relay's; its way out is stop, once the write under
// way is done. A write abandoned because the context ended is left to end
// by itself: send and ask exit right after, which ends it; a caller of Send
// or Ask that owns a writer which may block ends it by closing what it
// writes to. An Asker's next turn writes nothing before it has ended
// (after, pending): the writers of two turns never run at once.
type output struct {
	jobs      chan func() // unbuffered: taken only by an idle goroutine
	done      chan struct{}
	exited    chan struct{}
	abandoned bool // a job was left running when the context ended
	// limit, when set, is the request's own time limit: a write still
	// blocked then is given up (context.DeadlineExceeded) even while ctx,
	// which waits a little longer for the agent's timed-out frame, runs
	// on: a blocked stdout cannot take that frame anyway.
	limit time.Time
	// after, when set, is closed when a job an earlier output abandoned
	// has returned: no job starts before.
	after <-chan struct{}
}

func startOutput(limit time.Time, after <-chan struct{}) *output {
	o := &output{jobs: make(chan func()), done: make(chan struct{}, 1), exited: make(chan struct{}), limit: limit, after: after}
	go func() {
		defer close(o.exited)
		for job := range o.jobs {
			job()
			o.done <- struct{}{} // room: the relay takes each before the next job
		}
	}()
	return o
}

// do runs job on the output goroutine and waits until it is done, or ctx
// is, or the limit passed, and then returns ctx's error (or
// context.DeadlineExceeded): the job is left running. Once ctx is
// done, no job starts; nor before after is closed.
func (o *output) do(ctx context.Context, job func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var limit <-chan time.Time
	if !o.limit.IsZero() {
		t := time.NewTimer(time.Until(o.limit))
		defer t.Stop()
		limit = t.C
	}
	if o.after != nil {
		select {
		case <-o.after:
			o.after = nil
		case <-ctx.Done():
			return ctx.Err()
		case <-limit:
			return context.DeadlineExceeded
		}
	}
	select {
	case o.jobs <- job:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-o.done:
		return nil
	case <-ctx.Done():
		o.abandoned = true
		return ctx.Err()
	case <-limit:
		o.abandoned = true
		return context.DeadlineExceeded
	}
}

// pending is what the next output of the same writers waits for before
// its first job (its after): this one's abandoned job, or what this one
// was to wait for and never did; nil when nothing is under way.
func (o *output) pending() <-chan struct{} {
	if o.abandoned {
		return o.exited
	}
	return o.after
}

// stop ends the goroutine: at once when it is idle, when the abandoned
// job returns otherwise, without waiting for that.
func (o *output) stop() {
	close(o.jobs)
	if !o.abandoned {
		<-o.exited
	}
}
