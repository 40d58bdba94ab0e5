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

// promptLook is a prompt the loop may probe for: the child's Reader,
// and what the tracker had seen when it showed the prompt.
type promptLook struct {
	r       Reader
	tr      *turn.Tracker
	outputs uint64 // running.outputs then
	child   uint64 // running.children then
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
// not yet taken, has a Reader, and its output is not held up for an
// asker (then the child may have more to write than the agent read).
func (r *running) look() (promptLook, bool) {
	if r.reader == nil || r.tracker == nil || r.clock.held() || !r.tracker.AtPrompt() {
		return promptLook{}, false
	}
	return promptLook{r: r.reader, tr: r.tracker, outputs: r.outputs, child: r.children}, true
}

// probe probes the prompt look shows: at once when it is new, then
// whenever its next probe is due. It reports when to probe it again
// (zero: not), and whether the loop is to look again at once: the prompt
// was taken, or the schedule still spins.
func (s *prober) probe(look promptLook, now time.Time) (again time.Time, atOnce bool) {
	if !s.look.same(look) {
		s.look, s.first, s.next = look, now, now
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

// settle takes the prompt look showed at now, its child seen waiting for
// input, and returns what the tracker settled; nothing when the child
// wrote since (more output, or a new child), its output is held up, or
// the tracker moved on (a turn began, input was typed).
func (r *running) settle(look promptLook, now time.Time) []turn.Segment {
	if r.tracker != look.tr || r.outputs != look.outputs || r.children != look.child || r.clock.held() || !look.tr.AtPrompt() {
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
