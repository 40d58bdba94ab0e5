package child

import (
	"log/slog"
	"strconv"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/internal/procfs"
	"golang.org/x/sys/unix"
)

// stopCgroup is Stop for a child with a cgroup: the stop signal to every
// process of its tree not yet asked (its group as a whole, the rest one by
// one; see ask), then, when anything is left at timeout, cgroup.kill,
// which reaches every process in the cgroup at once, forks in flight
// included, and SIGKILL for the members of the child's process group that
// left the cgroup (see groupLeft). Once the cgroup and the group are empty
// and the child reaped, the cgroup is removed. killed says whether the
// stop had to escalate. A p that ignores sig is warned about (see
// warnIgnored).
func (r *Reaper) stopCgroup(p *Process, sig syscall.Signal, timeout, patience time.Duration) (st ExitStatus, killed bool) {
	r.beginStop(p)
	defer r.endStop(p)
	cg := p.cg
	if !r.cgroupDone(p) {
		killAt := time.Now().Add(timeout)
		r.ask(p, sig, r.cgroupTree(p))
		r.waitMarked(p, killAt, func(until time.Time) bool {
			return r.waitCgroup(p, until, func(left []proc) { r.ask(p, sig, left) })
		})
		if !r.cgroupDone(p) {
			killed = true
			if err := cg.Kill(); err != nil {
				r.log.Warn("cannot kill the cgroup; killing its tree", "cgroup", cg.Path(), "err", err)
				r.signalTree(p, syscall.SIGKILL, r.cgroupTree)
			}
			r.signalTree(p, syscall.SIGKILL, func(p *Process) []proc { return r.groupLeft(p, nil) })
			kill := func(left []proc) {
				for _, q := range left {
					signalProc(q, syscall.SIGKILL)
				}
			}
			if !r.waitCgroup(p, time.Now().Add(patience), kill) {
				r.log.Warn("giving up on processes that survive cgroup.kill (uninterruptible sleep?)",
					"pid", p.Pid, "cgroup", cg.Path(), "left", cg.Procs())
			}
		}
	}
	cg.Remove()
	if !r.exited(p) {
		return ExitStatus{ws: unix.WaitStatus(syscall.SIGKILL)}, killed
	}
	return p.Status(), killed
}

// cgroupDone reports whether p was reaped and nothing of its tree is left:
// its cgroup is empty and no member of its group runs elsewhere.
func (r *Reaper) cgroupDone(p *Process) bool {
	return r.exited(p) && !p.cg.Populated() && len(r.groupLeft(p, nil)) == 0
}

// waitCgroup waits until p's cgroup is empty, p reaped and the members of
// its group that left the cgroup gone, or deadline. Those members are
// looked for every 10 ms, and handed to signal each time: a process that
// joins the group meanwhile is asked too.
func (r *Reaper) waitCgroup(p *Process, deadline time.Time, signal func([]proc)) bool {
	if !p.cg.WaitEmpty(deadline) {
		return false
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		if !r.exited(p) {
			return false
		}
	}
	for {
		left := r.groupLeft(p, nil)
		if len(left) == 0 {
			return !p.cg.Populated()
		}
		signal(left)
		wait := min(time.Until(deadline), 10*time.Millisecond)
		if wait <= 0 {
			return false
		}
		time.Sleep(wait)
	}
}

// cgroupProcList lists the live processes in cg and below it.
func cgroupProcList(cg *cgroup.Group) []proc {
	var procs []proc
	for _, pid := range cg.AllProcs() {
		if q, ok := procfs.Stat(strconv.Itoa(pid)); ok && q.State != 'Z' && q.State != 'X' {
			procs = append(procs, q)
		}
	}
	return procs
}

// LimitPids puts the children of r under a pids budget in the cgroup v1
// pids hierarchy where one limits the agent (see cgroup.LimitPids): the
// spawn thread, which forks every child, joins the children's cgroup.
func (r *Reaper) LimitPids(log *slog.Logger) (*cgroup.PidsLimit, error) {
	return cgroup.LimitPids(log, r.onSpawnThread)
}
