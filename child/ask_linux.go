package child

import (
	"syscall"
	"time"
)

// AskToStop gives every process of p's tree sig, then SIGCONT, without
// waiting: its process group in one kill, the other members one by one. A Stop of p
// that follows with the same signal does not send it again to any process
// that got it here, so each process of the tree is asked once. With a
// cgroup the tree is the cgroup's processes and what a scan of /proc
// attributes to p outside it (see cgroupTree); without, a scan of /proc.
func (r *Reaper) AskToStop(p *Process, sig syscall.Signal) {
	r.ask(p, sig, r.treeFunc(p)(p))
}

// treeFunc is how p's tree is listed: its cgroup, or a scan of /proc.
func (r *Reaper) treeFunc(p *Process) func(*Process) []proc {
	if p.cg != nil {
		return r.cgroupTree
	}
	return r.tree
}

// ask sends sig to every process of procs that has not had it from p's
// stop yet, each time followed by SIGCONT (see wakeAfter); the first time,
// it signals p's process group as a whole and counts the group's members
// in procs as asked.
func (r *Reaper) ask(p *Process, sig syscall.Signal, procs []proc) {
	r.mu.Lock()
	first := p.askedSig != sig
	if first {
		p.askedSig, p.asked, p.askedAt = sig, make(map[procKey]bool, len(procs)), time.Now()
	}
	// Until p is reaped its pid cannot be reused, so the group is its own.
	grouped := first && !p.reaped && syscall.Kill(-p.Pid, sig) == nil
	if grouped && wakeAfter(sig) {
		syscall.Kill(-p.Pid, syscall.SIGCONT)
	}
	var todo []proc
	for _, q := range procs {
		k := procKey{q.PID, q.Start}
		if p.asked[k] {
			continue
		}
		p.asked[k] = true
		if grouped && q.PGID == p.Pid {
			continue // the group's signal reached it
		}
		todo = append(todo, q)
	}
	r.mu.Unlock()
	for _, q := range todo {
		signalProc(q, sig)
		if wakeAfter(sig) {
			signalProc(q, syscall.SIGCONT)
		}
	}
}

// wakeAfter reports whether a stop signal sig is followed by SIGCONT, as
// Docker and systemd do: a process stopped (by a forwarded TSTP, say)
// gets sig pending and acts on it only once it runs again. Not after
// SIGKILL, which ends a stopped process anyway, nor after SIGCONT itself
// or a signal that stops, which SIGCONT would undo.
func wakeAfter(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGKILL, syscall.SIGCONT, syscall.SIGSTOP, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU:
		return false
	}
	return true
}

// askToStop asks every process of p's tree to stop with sig and waits
// until the tree is gone or deadline passes. A process that joins the tree
// while it waits, such as an orphan that can be told to be p's only once
// another child has ended, is asked too, so that none of it meets SIGKILL
// without having been asked. A p that ignores sig is warned about (see
// warnIgnored).
func (r *Reaper) askToStop(p *Process, sig syscall.Signal, deadline time.Time, tree func(*Process) []proc) {
	for {
		procs := tree(p)
		r.ask(p, sig, procs)
		r.warnIgnored(p, deadline)
		if (r.exited(p) && len(procs) == 0) || !time.Now().Before(deadline) {
			return
		}
		wait := min(time.Until(deadline), 10*time.Millisecond)
		select {
		case <-p.done:
		case <-time.After(wait):
		}
	}
}
