package child

import (
	"slices"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/cgroup"
)

// How a stop of a child with a cgroup waits for its tree to go. The cgroup
// empties with a notification (cgroup.events, one watch for the whole
// stop: see cgroup.EmptyWatch), the child's reaping closes p.done, and
// every exit of a child of the agent, an orphan included, is a change the
// Reaper announces (see nextChange). What has no notification is a
// process reparented to the agent (an orphan whose parent died, such as a
// grandchild that double-forked, called setsid and left the cgroup) and
// the end of a process outside the cgroup that is no child of the agent
// (a member of the child's group, a descendant of an orphan): only
// /proc shows them. So the wait reads a few signs of them every
// orphanCheck (see outsideSigns), which costs no /proc scan, and scans
// /proc (see outside) only when a sign changed.

// orphanCheck is how often a stop reads the signs of what its tree holds
// outside its cgroup (see outsideSigns): no notification says when a
// process is reparented to the agent.
const orphanCheck = 100 * time.Millisecond

// outsideSigns is what a stop reads, without a scan of /proc, to tell
// whether what its tree holds outside the cgroup (see outside) may have
// changed since it last looked. That set changes only through the
// agent's children (an orphan appears among them or goes), the children
// attribute weighs (see Reaper.gen), p's reaping, or p's process group
// (its members left after p was reaped, which may be no child of the
// agent).
type outsideSigns struct {
	ok     bool   // the agent's children could be listed; without, every look scans
	kids   []int  // the agent's children, sorted
	gen    uint64 // Reaper.gen
	exited bool   // p was reaped
	group  bool   // p's process group has a member, once p was reaped
}

// outsideSigns reads the signs of p's tree outside its cgroup.
func (r *Reaper) outsideSigns(p *Process) outsideSigns {
	s := outsideSigns{exited: r.exited(p)}
	// Under mu no child is reaped (see mayHaveOrphans).
	r.mu.Lock()
	s.kids, s.ok = r.children()
	s.gen = r.gen
	r.mu.Unlock()
	slices.Sort(s.kids)
	if s.exited {
		s.group = syscall.Kill(-p.Pid, 0) != syscall.ESRCH
	}
	return s
}

// same reports whether s and o show no change.
func (s outsideSigns) same(o outsideSigns) bool {
	return s.ok && o.ok && s.gen == o.gen && s.exited == o.exited && s.group == o.group && slices.Equal(s.kids, o.kids)
}

// cgroupWait is the wait of one stop of p for p's cgroup to empty and for
// what p's tree holds outside it to go. Its owner closes it.
type cgroupWait struct {
	r     *Reaper
	p     *Process
	empty *cgroup.EmptyWatch
	seen  outsideSigns // read before the last look outside
	found bool         // the last look found something outside
}

// newCgroupWait starts a wait of a stop of p. Call it before the stop's
// first look outside the cgroup (its first cgroupTree), whose signs it
// reads.
func (r *Reaper) newCgroupWait(p *Process) *cgroupWait {
	w := &cgroupWait{r: r, p: p, empty: p.cg.WatchEmpty()}
	w.empty.WakeOn(p.done) // a tree that dies with its child is empty then
	w.looked()
	return w
}

func (w *cgroupWait) close() { w.empty.Close() }

// looked records that the stop is about to look outside the cgroup by
// itself (a cgroupTree, a signalTree of outside): a wait looks again only
// once a sign changed after that.
func (w *cgroupWait) looked() {
	w.seen, w.found = w.r.outsideSigns(w.p), true
}

// lookOutside hands signal what p's tree holds outside the cgroup, when a
// sign changed since the last look; it reports whether the last look,
// this one or an earlier one, found anything.
func (w *cgroupWait) lookOutside(signal func([]proc)) bool {
	now := w.r.outsideSigns(w.p)
	if now.same(w.seen) {
		return w.found
	}
	w.seen = now
	left := w.r.outside(w.p)
	w.found = len(left) > 0
	signal(left)
	return w.found
}

// wait waits until p's cgroup is empty, p reaped and nothing of its tree
// left outside the cgroup, or deadline, and reports which. What runs
// outside is handed to signal whenever it may have changed: a process
// that joins the tree meanwhile, such as an orphan reparented to the
// agent, is asked too.
func (w *cgroupWait) wait(deadline time.Time, signal func([]proc)) bool {
	return w.waitEmpty(deadline, signal) && w.waitReaped(deadline) && w.waitOutside(deadline, signal)
}

// waitEmpty waits until the cgroup is empty or deadline, looking outside
// it every orphanCheck meanwhile.
func (w *cgroupWait) waitEmpty(deadline time.Time, signal func([]proc)) bool {
	for {
		until := time.Now().Add(orphanCheck)
		if until.After(deadline) {
			until = deadline
		}
		if w.empty.Wait(until) {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		w.lookOutside(signal)
	}
}

// waitReaped waits until p is reaped or deadline; once the cgroup is
// empty, that is a moment away.
func (w *cgroupWait) waitReaped(deadline time.Time) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-w.p.done:
		return true
	case <-t.C:
		return w.r.exited(w.p)
	}
}

// waitOutside waits, p reaped and its cgroup empty, until nothing of its
// tree runs outside the cgroup, or deadline. It looks again at each
// change the Reaper announces, the going of an orphan among them, and
// every orphanCheck for what no notification tells (see the top of this
// file).
func (w *cgroupWait) waitOutside(deadline time.Time, signal func([]proc)) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	tick := time.NewTicker(orphanCheck)
	defer tick.Stop()
	w.seen = outsideSigns{} // look now: what the cgroup held is gone
	for {
		changed := w.r.nextChange()
		if !w.lookOutside(signal) {
			return !w.p.cg.Populated()
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-t.C:
			return false
		}
	}
}
