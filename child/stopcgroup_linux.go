package child

import (
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stopCgroup is Stop for a child with a cgroup: the stop signal to every
// process of the cgroup not yet asked (its group as a whole, the rest one by
// one; see ask), then,
// when anything is left at timeout, cgroup.kill, which reaches every
// process in it at once, forks in flight included. Once the cgroup is
// empty and the child reaped, the cgroup is removed. killed says whether
// cgroup.kill was needed.
func (r *Reaper) stopCgroup(p *Process, sig syscall.Signal, timeout, patience time.Duration) (st ExitStatus, killed bool) {
	r.beginStop(p)
	defer r.endStop(p)
	cg := p.cg
	tree := func(*Process) []proc { return cgroupTree(cg.path) }
	if !r.cgroupDone(p) {
		r.ask(p, sig, tree(p))
		r.waitCgroup(p, time.Now().Add(timeout))
		if !r.cgroupDone(p) {
			killed = true
			if err := cg.Kill(); err != nil {
				r.log.Warn("cannot kill the cgroup; killing its tree", "cgroup", cg.path, "err", err)
				r.signalTree(p, syscall.SIGKILL, tree)
			}
			if !r.waitCgroup(p, time.Now().Add(patience)) {
				r.log.Warn("giving up on processes that survive cgroup.kill (uninterruptible sleep?)",
					"pid", p.Pid, "cgroup", cg.path, "left", cg.Procs())
			}
		}
	}
	cg.Remove()
	if !r.exited(p) {
		return ExitStatus{ws: unix.WaitStatus(syscall.SIGKILL)}, killed
	}
	return p.Status(), killed
}

// cgroupDone reports whether p was reaped and its cgroup is empty.
func (r *Reaper) cgroupDone(p *Process) bool {
	return r.exited(p) && !p.cg.Populated()
}

// waitCgroup waits until p's cgroup is empty and p reaped, or deadline.
func (r *Reaper) waitCgroup(p *Process, deadline time.Time) bool {
	if !p.cg.WaitEmpty(deadline) {
		return false
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return r.exited(p)
	}
}

// cgroupTree lists the processes in the cgroup at path and below it.
func cgroupTree(path string) []proc {
	var procs []proc
	for _, pid := range cgroupProcsDeep(path) {
		if q, ok := readProc(strconv.Itoa(pid)); ok && q.state != 'Z' && q.state != 'X' {
			procs = append(procs, q)
		}
	}
	return procs
}
