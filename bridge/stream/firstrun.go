//go:build linux

package stream

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/readwait"
	"github.com/fifobridge/fifobridge/turn"
)

// This file is a session's first run (Config.FirstRun). A program the
// child cannot find or run (`env PROG`, a shell's `PROG: not found`)
// makes it end at once with 127 or 126, as the agent's own start of a
// missing PROGRAM fails: such a first run is a failed start, not a child
// to restart. Until the first child is past that (it ran for FirstRun
// and, with a conversation, has been ready), its output, and on pipes
// its stderr when that is the agent's (stderrcopy.go), are shown to a
// turn.Lines each, whose last line the error quotes. That it is alive is
// known sooner when the probe of package readwait sees it wait for its
// input: a child that reads its input has found its program.

// watchChunk is the most of the first child's output on pipes read at
// once while it is watched, when its output is otherwise spliced: a few
// KiB, so that the copy holds little once the watch is over.
const watchChunk = 4 << 10

// firstRun judges the first child of an engine; nil when Config.FirstRun
// is not set, and then every method does nothing.
type firstRun struct {
	grace time.Duration
	alive func()      // told once the first child is alive, or nil
	ready func() bool // whether the conversation's child has been ready; nil without one

	aliveOnce sync.Once
	wg        sync.WaitGroup // awaitAlive
	done      atomic.Bool    // over, read without the lock

	mu          sync.Mutex
	begun       bool
	p           *child.Process // the first child, once it runs
	out, stderr *turn.Lines    // what its output and its stderr showed; nil once the watch is over
	last        *turn.Lines    // the one of them written last
	over        bool           // the watch is over: the first run can no longer fail so
	judged      bool           // the first child ended and was judged
	failed      *FirstRunError // how it failed, if it did
}

// FirstRunError is Run's error when the first child ended as a program
// that cannot start does (Config.FirstRun).
type FirstRunError struct {
	Status child.ExitStatus
	// Ran is how long it ran; Grace is Config.FirstRun.
	Ran, Grace time.Duration
	// LastLine is what the child's last line showed (escapes removed, at
	// most turn.MaxLastLine bytes), "" when it showed none.
	LastLine string
}

func (e *FirstRunError) Error() string {
	when := fmt.Sprintf("within %v of its start", e.Grace)
	if e.Ran >= e.Grace {
		when = "before it ever showed its prompt"
	}
	msg := fmt.Sprintf("its first run ended with %s %s, as a program that cannot start does: ", e.Status, when)
	if e.LastLine == "" {
		return msg + "it has shown no line"
	}
	return msg + "its last line is " + strconv.Quote(e.LastLine)
}

// Code is the child's exit code: 127 or 126.
func (e *FirstRunError) Code() int { return e.Status.Code() }

// newFirstRun returns the judge of cfg's first child, or nil without
// cfg.FirstRun; ready, with a conversation, says whether its child has
// been ready since it started; alive, if set, is told once the first
// child did not fail so: it was seen waiting for its input, or ran for
// FirstRun, or ended otherwise.
func newFirstRun(cfg *Config, ready func() bool, alive func()) *firstRun {
	if cfg.FirstRun <= 0 {
		return nil
	}
	return &firstRun{grace: cfg.FirstRun, alive: alive, ready: ready}
}

// begin is told of every start before the child can write, and reports
// whether this one is the first: its output is then watched.
func (f *firstRun) begin() bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.begun {
		return false
	}
	f.begun, f.out, f.stderr = true, turn.NewLines(), turn.NewLines()
	return true
}

// watch is told that p, the first child, runs; r, if it has a probe,
// sees it wait for its input. Until p ends, or is seen alive, a
// goroutine watches it; wait waits for that.
func (f *firstRun) watch(p *child.Process, r *childReader) {
	f.mu.Lock()
	f.p = p
	f.mu.Unlock()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.awaitAlive(p, r)
	}()
}

// wait waits until the watch of the first child returned.
func (f *firstRun) wait() {
	if f != nil {
		f.wg.Wait()
	}
}

// aliveLook is the longest wait between two looks whether the first
// child waits for its input: a probe costs some microseconds, and an
// open without a prompt waits for its answer.
const aliveLook = 10 * time.Millisecond

// awaitAlive tells alive once p is seen waiting for its input (through
// r's probe, on a schedule that doubles from readwait.FirstWait up to
// aliveLook) or is
// still running after the grace period, when it also ends the watch. It
// returns then, or once p ended: its judge (judge) decides.
func (f *firstRun) awaitAlive(p *child.Process, r *childReader) {
	end := time.NewTimer(time.Until(p.Started.Add(f.grace)))
	defer end.Stop()
	var look <-chan time.Time
	if r != nil && r.probe != nil {
		t := time.NewTimer(readwait.FirstWait)
		defer t.Stop()
		look = t.C
	}
	for {
		select {
		case <-p.Done():
			return
		case <-end.C:
			f.mu.Lock()
			f.settle(time.Now())
			f.mu.Unlock()
			if !ended(p) {
				f.tellAlive()
			}
			return
		case <-look:
			if blocked, err := r.Blocked(); blocked {
				f.tellAlive()
				look = nil // the watch goes on until the grace period ends
			} else if err != nil {
				look = nil
			} else {
				look = time.After(min(max(readwait.NextProbe(time.Since(p.Started)), readwait.FirstWait), aliveLook))
			}
		}
	}
}

// ended reports whether p was reaped.
func ended(p *child.Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// tellAlive tells alive, once.
func (f *firstRun) tellAlive() {
	f.aliveOnce.Do(func() {
		if f.alive != nil {
			f.alive()
		}
	})
}

// settle ends the watch at now if the first run can no longer fail: its
// child ran for the grace period and has not ended (when it has, its
// judge decides; it ended later than now, so it ran at least as long),
// and with a conversation it has been ready. It reports whether the
// watch is over. Under f.mu.
func (f *firstRun) settle(now time.Time) bool {
	if f.over || f.p == nil || now.Sub(f.p.Started) < f.grace || ended(f.p) || f.ready != nil && !f.ready() {
		return f.over
	}
	f.endWatch()
	return true
}

// endWatch forgets what the watch showed. Under f.mu.
func (f *firstRun) endWatch() {
	f.over, f.out, f.stderr, f.last = true, nil, nil, nil
	f.done.Store(true)
}

// watching reports whether the first run is watched still.
func (f *firstRun) watching() bool {
	if f == nil || f.done.Load() {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.settle(time.Now())
}

// output shows the watch bytes the child wrote to its output (or its
// terminal); stderrOut, bytes it wrote to its stderr. p is not kept.
func (f *firstRun) output(p []byte)    { f.show(p, false) }
func (f *firstRun) stderrOut(p []byte) { f.show(p, true) }

func (f *firstRun) show(p []byte, stderr bool) {
	if f == nil || f.done.Load() {
		return // the watch is over: nothing waits for the lock
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.settle(time.Now()) {
		return
	}
	f.last = f.out
	if stderr {
		f.last = f.stderr
	}
	f.last.Write(p)
}

// judge is the Supervisor's GiveUp: the first child, which ended by
// itself with st after ran, failed as a program that cannot start when
// it ended with 127 or 126 within the grace period, or with a
// conversation before it was ever ready. Later children are not judged.
func (f *firstRun) judge(_ *child.Process, st child.ExitStatus, ran time.Duration) bool {
	f.mu.Lock()
	if f.judged {
		f.mu.Unlock()
		return false
	}
	f.judged = true
	code := st.Code()
	fails := st.Signal() == 0 && (code == 127 || code == 126) && (ran < f.grace || f.ready != nil && !f.ready())
	if fails {
		f.failed = &FirstRunError{Status: st, Ran: ran, Grace: f.grace}
	} else {
		f.endWatch()
	}
	f.mu.Unlock()
	if !fails {
		f.tellAlive()
	}
	return fails
}

// failedRun reports whether the first run failed.
func (f *firstRun) failedRun() bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed != nil
}

// err is Run's error when the first run failed, with the child's last
// line: call it once its output and stderr were copied.
func (f *firstRun) err() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed == nil {
		return nil
	}
	if f.out != nil {
		f.failed.LastLine = f.lastLine()
		f.endWatch()
	}
	return f.failed
}

// lastLine is the last line of the stream written last, or of the other
// when that showed none. Under f.mu, while watching.
func (f *firstRun) lastLine() string {
	other := f.stderr
	if f.last == f.stderr {
		other = f.out
	}
	if f.last != nil {
		if line := f.last.Last(); line != "" {
			return line
		}
	}
	return other.Last()
}
