//go:build linux

package conversation

import (
	"errors"
	"log/slog"
	"runtime"
	"time"

	"github.com/fifobridge/fifobridge/internal/readwait"
	"github.com/fifobridge/fifobridge/turn"
)

// This file ends a turn as soon as the child waits for input, instead of
// after -settle of quiet: when the child's output ends in a line that
// looks like its prompt (the tracker's AtPrompt), the loop asks the
// child's Reader whether the reader of its input is blocked reading it,
// at once and then on readwait.NextProbe's schedule, and on a yes takes
// the prompt (Tracker.Settle). The Reader is asked outside the lock; its yes
// counts only if nothing reached the tracker meanwhile. Where it cannot
// tell, and once -settle has passed, the tracker's own deadline decides,
// as it does for a child without a Reader.
//
// The same hands on at once the question a running command waits on, a
// turn's unfinished last line that is not the prompt (the tracker's
// Unfinished): Settle hands it on and the turn goes on. Such a line is
// first probed readwait.FirstWait after it came, not at once: a child
// that streams output ends most reads in mid-line, and a probe of each
// (with its spin) would cost more than the child's output; a person does
// not tell a millisecond.

// promptLook is a prompt the loop may probe for, or an unfinished line:
// the child's Reader, and what the tracker had seen when it showed it.
type promptLook struct {
	r          Reader
	tr         *turn.Tracker
	outputs    uint64 // running.outputs then
	child      uint64 // running.children then
	unfinished bool   // a turn's unfinished line, not the prompt
}

// same says whether l and m are the same prompt of the same child.
func (l promptLook) same(m promptLook) bool {
	return l.tr == m.tr && l.outputs == m.outputs && l.child == m.child
}

// prober is the loop's own, and takes no lock: it asks a prompt's Reader
// whether the child waits for input, and on a yes hands the prompt to
// settle (which takes the conversation's lock, and takes the prompt only
// if nothing reached the tracker meanwhile). It remembers when it probes
// the prompt it saw again.
type prober struct {
	log    *slog.Logger
	settle func(look promptLook)

	look   promptLook
	first  time.Time // the first probe of it
	next   time.Time // the next one; zero: none, -settle decides
	logged uint64    // the last child whose probe failed, logged once
}

// look returns the prompt to probe for, if the child shows one that is
// not yet taken (or a turn's unfinished line not yet handed on), has a
// Reader, and its output is not held up for an asker (then the child may
// have more to write than the agent read).
func (r *running) look() (promptLook, bool) {
	if r.reader == nil || r.tracker == nil || r.clock.held() {
		return promptLook{}, false
	}
	at := r.tracker.AtPrompt()
	if !at && !r.tracker.Unfinished() {
		return promptLook{}, false
	}
	return promptLook{r: r.reader, tr: r.tracker, outputs: r.outputs, child: r.children, unfinished: !at}, true
}

// probe probes the prompt look shows: at once when it is new, then
// whenever its next probe is due. It reports when to probe it again
// (zero: not), and whether the loop is to look again at once: the prompt
// was taken, or the schedule still spins.
func (s *prober) probe(look promptLook, now time.Time) (again time.Time, atOnce bool) {
	if !s.look.same(look) {
		s.look, s.first, s.next = look, now, now
		if look.unfinished {
			s.next = now.Add(readwait.FirstWait)
		}
	}
	if s.next.IsZero() || now.Before(s.next) {
		return s.next, false
	}
	blocked, err := look.r.Blocked()
	switch {
	case err != nil:
		s.cannotSee(look.child, err)
		s.next = time.Time{}
		return time.Time{}, false
	case blocked:
		s.settle(look)
		return time.Time{}, true
	}
	now = time.Now()
	d := readwait.NextProbe(now.Sub(s.first))
	if d == 0 {
		runtime.Gosched()
		return time.Time{}, true
	}
	s.next = now.Add(d)
	return s.next, false
}

// settle takes the prompt look showed (or hands its unfinished line on)
// at now, its child seen waiting for input, and returns what the tracker
// settled; nothing when the child wrote since (more output, or a new
// child), its output is held up, or the tracker moved on (a turn began,
// input was typed).
func (r *running) settle(look promptLook, now time.Time) []turn.Segment {
	if r.tracker != look.tr || r.outputs != look.outputs || r.children != look.child || r.clock.held() ||
		!look.tr.AtPrompt() && !look.tr.Unfinished() {
		return nil
	}
	return look.tr.Settle(r.clock.at(now))
}

// cannotSee logs, once per child, that its Reader could not tell: -settle
// decides its turns where that is so.
func (s *prober) cannotSee(child uint64, err error) {
	if s.logged == child {
		return
	}
	s.logged = child
	if errors.Is(err, readwait.ErrCannotSee) {
		s.log.Info("turns end after -settle: the agent cannot see whether the child waits for input", "err", err)
		return
	}
	s.log.Debug("the child's reader could not be probed: -settle decides", "err", err)
}
