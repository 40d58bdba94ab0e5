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
// process of its tree (see cgroupTree) not yet asked (its group as a
// whole, the rest one by one; see ask), then, when anything is left at
// timeout, cgroup.kill, which reaches every process in the cgroup at once,
// forks in flight included, and SIGKILL for what runs outside the cgroup
// (see outside). Once the cgroup is empty, the child reaped and nothing of
// its tree left outside, the cgroup is removed. killed says whether the
// stop had to escalate. A p that ignores sig is warned about (see
// warnIgnored).
func (r *Reaper) stopCgroup(p *Process, sig syscall.Signal, timeout, patience time.Duration) (st ExitStatus, killed bool) {
	r.beginStop(p)
	defer r.endStop(p)
	if !r.cgroupDone(p) {
		killed = r.stopCgroupTree(p, sig, time.Now().Add(timeout), patience)
	}
	p.cg.Remove()
	if !r.exited(p) {
		return ExitStatus{ws: unix.WaitStatus(syscall.SIGKILL)}, killed
	}
	return p.Status(), killed
}

// stopCgroupTree is stopCgroup's signals and waits, with one cgroupWait
// for all of them; it reports whether it escalated at killAt.
func (r *Reaper) stopCgroupTree(p *Process, sig syscall.Signal, killAt time.Time, patience time.Duration) (killed bool) {
	w := r.newCgroupWait(p)
	defer w.close()
	ask := func(procs []proc) { r.ask(p, sig, procs) }
	ask(r.cgroupTree(p))
	r.waitMarked(p, killAt, func(until time.Time) bool { return w.wait(until, ask) })
	if r.cgroupDone(p) {
		return false
	}
	cg := p.cg
	w.looked()
	if err := cg.Kill(); err != nil {
		r.log.Warn("cannot kill the cgroup; killing its tree", "cgroup", cg.Path(), "err", err)
		r.signalTree(p, syscall.SIGKILL, r.cgroupTree)
	} else {
		r.signalTree(p, syscall.SIGKILL, r.outside)
	}
	kill := func(procs []proc) {
		for _, q := range procs {
			signalProc(q, syscall.SIGKILL)
		}
	}
	if !w.wait(time.Now().Add(patience), kill) {
		r.log.Warn("giving up on processes that survive cgroup.kill (uninterruptible sleep?)",
			"pid", p.Pid, "cgroup", cg.Path(), "left", cg.Procs())
	}
	return true
}

// cgroupDone reports whether p was reaped and nothing of its tree is left:
// its cgroup is empty and nothing of it runs outside (see outside).
func (r *Reaper) cgroupDone(p *Process) bool {
	return r.exited(p) && !p.cg.Populated() && len(r.outside(p)) == 0
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
