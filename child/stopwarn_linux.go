package child

import (
	"syscall"
	"time"
)

// ignoreMark is how long a child may take to act on its stop signal: one
// still there this long after it, in a stop that waits longer for
// SIGKILL, is taken to ignore it (an interactive shell ignores TERM), and
// the stop says so once. Every stop of such a child would otherwise take
// the whole -stop-timeout and end in SIGKILL, with nothing to say why.
const ignoreMark = 2 * time.Second

// markOf returns when a stop of p that SIGKILLs at killAt warns about p
// ignoring its stop signal: ignoreMark after p was first asked to stop;
// ok is false when that stop has no such moment (p was not asked, or
// killAt comes first) or it has warned already.
func (r *Reaper) markOf(p *Process, killAt time.Time) (mark time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.askedAt.IsZero() || p.warned {
		return time.Time{}, false
	}
	mark = p.askedAt.Add(ignoreMark)
	return mark, killAt.After(mark)
}

// warnIgnored logs, once per child, that p is still there at its mark
// (see markOf), when the mark has passed and p has not been reaped: the
// child itself, not the rest of its tree, since the child is what
// -stop-signal is chosen for.
func (r *Reaper) warnIgnored(p *Process, killAt time.Time) {
	mark, ok := r.markOf(p, killAt)
	if !ok || time.Now().Before(mark) || r.exited(p) {
		return
	}
	r.mu.Lock()
	warned, sig := p.warned, p.askedSig
	p.warned = true
	r.mu.Unlock()
	if warned {
		return // another stop of p got there first
	}
	hint := "-stop-signal HUP, or another signal it acts on, stops it at once"
	if sig == syscall.SIGHUP {
		hint = "-stop-signal TERM, or another signal it acts on, stops it at once"
	}
	r.log.Warn("the child ignores its stop signal; SIGKILL ends it at -stop-timeout",
		"pid", p.Pid, "signal", SignalName(sig), "after", ignoreMark,
		"sigkill_in", time.Until(killAt).Round(time.Millisecond), "hint", hint)
}

// waitMarked is wait(killAt) for a stop of p that SIGKILLs at killAt,
// split at p's mark, where p, if still there, is warned about (see
// warnIgnored). wait reports whether what it waits for came before the
// time it is given; waitMarked reports what the last wait did.
func (r *Reaper) waitMarked(p *Process, killAt time.Time, wait func(until time.Time) bool) bool {
	if mark, ok := r.markOf(p, killAt); ok {
		if wait(mark) {
			return true
		}
		r.warnIgnored(p, killAt)
	}
	return wait(killAt)
}

// AwaitAsked waits until p is reaped or killAt passes, and reports whether
// p was reaped; p's tree was given its stop signal (AskToStop), and
// SIGKILL follows at killAt. A p still there ignoreMark after that signal,
// when killAt is later, is warned about once, as Stop does.
func (r *Reaper) AwaitAsked(p *Process, killAt time.Time) bool {
	return r.waitMarked(p, killAt, func(until time.Time) bool {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		select {
		case <-p.done:
			return true
		case <-t.C:
			return r.exited(p)
		}
	})
}
