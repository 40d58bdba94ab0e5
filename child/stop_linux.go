package child

import (
	"slices"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/cgroup"
	"golang.org/x/sys/unix"
)

// killPatience is how long Stop waits for SIGKILLed processes to go, as
// long as for a killed cgroup (see cgroup.KillPatience); Stop gives up on
// what is left after this and warns.
const killPatience = cgroup.KillPatience

// Stop stops p and the rest of its tree: sig to all of it, then, when
// anything still runs after timeout, SIGKILL. It returns p's exit status once
// p has been reaped and nothing of its tree is left, or, when something
// outlives SIGKILL by killPatience, logs a warning naming what is left and
// returns: p's status if it was reaped, else a death by SIGKILL (the Reaper
// still reaps it whenever it goes). Calling it after p exited by itself
// cleans up what p left behind.
func (r *Reaper) Stop(p *Process, sig syscall.Signal, timeout time.Duration) ExitStatus {
	st, _ := r.StopKilled(p, sig, timeout)
	return st
}

// StopKilled is Stop that also reports whether the stop had to escalate:
// to SIGKILL, or, for a child with a cgroup, to cgroup.kill. A child with a
// cgroup has its tree taken from the cgroup, not from /proc, and the cgroup
// is removed once empty. A child that was given the foreground of the
// agent's terminal gives it back before StopKilled returns, so that the
// agent's next words on the terminal are a foreground group's.
func (r *Reaper) StopKilled(p *Process, sig syscall.Signal, timeout time.Duration) (ExitStatus, bool) {
	defer r.takeTerminalBack(p)
	if p.cg != nil {
		return r.stopCgroup(p, sig, timeout, killPatience)
	}
	st, left, killed := r.stop(p, sig, timeout, killPatience, r.tree)
	if len(left) > 0 {
		r.log.Warn("giving up on processes that survive SIGKILL (uninterruptible sleep?)", "pid", p.Pid, "left", left)
	}
	return st, killed
}

// stop is Stop with its patience and its view of the tree as parameters;
// left lists the pids still running when it gave up; killed says whether
// anything was left for SIGKILL.
func (r *Reaper) stop(p *Process, sig syscall.Signal, timeout, patience time.Duration, tree func(*Process) []proc) (st ExitStatus, left []int, killed bool) {
	r.beginStop(p)
	defer r.endStop(p)
	if r.treeGone(p) {
		return p.Status(), nil, false // the common case, answered without a /proc scan
	}
	r.askToStop(p, sig, time.Now().Add(timeout), tree)
	giveUp := time.Now().Add(patience)
	// SIGKILL cannot be ignored; the loop catches processes forked between
	// a scan and the signal, and waits for the child's own reaping.
	for r.signalTree(p, syscall.SIGKILL, tree) > 0 || !r.exited(p) {
		killed = true
		if !time.Now().Before(giveUp) {
			for _, q := range tree(p) {
				left = append(left, q.PID)
			}
			if !r.exited(p) {
				if !slices.Contains(left, p.Pid) {
					left = append(left, p.Pid)
				}
				return ExitStatus{ws: unix.WaitStatus(syscall.SIGKILL)}, left, killed
			}
			return p.Status(), left, killed
		}
		next := time.Now().Add(50 * time.Millisecond)
		if next.After(giveUp) {
			next = giveUp
		}
		r.waitTree(p, next, tree)
	}
	return p.Status(), nil, killed
}

// beginStop marks p as being stopped: while it is, p may own orphans (see
// attribute) even after it was reaped.
func (r *Reaper) beginStop(p *Process) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stops++
	p.stops++
	p.stopSeq = r.stops
	r.live[p] = true
	r.changedLocked()
}

func (r *Reaper) endStop(p *Process) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changedLocked()
	if p.stops--; p.stops == 0 {
		p.stopSeq = 0
		p.adopted = nil
		if r.running[p.Pid] != p {
			delete(r.live, p) // reaped
		}
	}
}

func (r *Reaper) exited(p *Process) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitTree waits until p is reaped and its tree is empty, or until deadline.
func (r *Reaper) waitTree(p *Process, deadline time.Time, tree func(*Process) []proc) {
	for time.Now().Before(deadline) {
		if r.exited(p) && len(tree(p)) == 0 {
			return
		}
		wait := min(time.Until(deadline), 10*time.Millisecond)
		select {
		case <-p.done:
			if len(tree(p)) == 0 {
				return
			}
			time.Sleep(wait)
		case <-time.After(wait):
		}
	}
}

// takeTerminalBack gives the agent's group the foreground of the terminal
// p was given, if p's group still has it.
func (r *Reaper) takeTerminalBack(p *Process) {
	if err := p.term.TakeBack(p); err != nil {
		r.log.Warn("cannot take the terminal back", "pid", p.Pid, "err", err)
	}
}
