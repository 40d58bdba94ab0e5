package child

import (
	"slices"
	"strconv"
	"syscall"

	"github.com/fifobridge/fifobridge/internal/procfs"
)

// Which processes make up a child's tree, found in /proc without cgroups.
//
// Certain, since the kernel records the link:
//   - the child itself, until it is reaped;
//   - the members of its process group, while that group is still the one
//     the child made (see groupIsChilds);
//   - every descendant of those, through the chain of parents, also one
//     that left the group or the session (setsid);
//   - a process whose group or session is led by a certain member;
//   - with cgroups, a process in the child's cgroup, and its descendants:
//     read only when there are orphans to place, and before they are
//     placed, so that an orphan that stayed in another child's cgroup is
//     never taken for the target's.
//
// Not recorded anywhere: the owner of an orphan, a process whose parent died
// so that it was reparented to the agent, and that runs in a group and a
// session of its own (a setsid'ed helper whose parent exited). Its
// candidates are the children that had started when it started and are
// still live: not yet reaped, or being stopped. It is the child's when the
// child is its only candidate. When another candidate runs and is not being
// stopped, the orphan is left alone, since killing it might break a request
// that still runs; the stop of the last of its candidates takes it. When
// every candidate is being stopped (the agent stops), it goes to the one
// whose stop began last: that stop's first scan sees it. Once a stop has
// taken an orphan that way, the orphan stays that child's for as long as the
// stop runs (it is adopted), so that a later stop of another candidate does
// not signal it again: it gets the stop signal once. Processes the agent
// inherited (an entrypoint shell's background jobs) are no child's.

// candidate is a started child as attribution sees it.
type candidate struct {
	pid      int
	start    uint64 // clock ticks after boot, from /proc
	reaped   bool
	stopping uint64 // when its latest Stop under way began (Reaper.stops), or 0
	adopted  []procKey
	cgroup   func() []int // the pids in its cgroup and the cgroups below, or nil without one
}

// procKey names a process for good: a pid is reused, a pid and a start
// time are not.
type procKey struct {
	pid   int
	start uint64
}

// tree returns the processes of p's tree still running, as far as they can
// be told apart from other children's (see above).
func (r *Reaper) tree(p *Process) []proc {
	if r.foreign {
		return nil // pids in /proc are another namespace's; only the group is reachable
	}
	all := procfs.Processes()
	// One attribution at a time, so that two stops cannot both take an
	// orphan before either has adopted it.
	r.treeMu.Lock()
	defer r.treeMu.Unlock()
	target, others := r.candidates(p)
	tree, took := attribute(target, others, r.procPID, r.inherited, all)
	if len(took) > 0 {
		r.mu.Lock()
		p.adopted = append(p.adopted, took...)
		r.mu.Unlock()
	}
	return tree
}

// candidates returns p and the other live children: not yet reaped, or
// being stopped. It waits for a fork under way to register its child: a
// child the caller saw in /proc, that is not registered yet, would
// otherwise pass for an orphan.
func (r *Reaper) candidates(p *Process) (target candidate, others []candidate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.forking > 0 {
		r.forked.Wait()
	}
	target = p.candidate()
	for q := range r.live {
		if q != p {
			others = append(others, q.candidate())
		}
	}
	return target, others
}

// candidate describes p; call it with r.mu held.
func (p *Process) candidate() candidate {
	c := candidate{pid: p.Pid, start: p.startTicks, reaped: p.reaped, stopping: p.stopSeq, adopted: slices.Clone(p.adopted)}
	if p.cg != nil {
		c.cgroup = p.cg.AllProcs
	}
	return c
}

// attribute returns the processes of all that belong to target's tree, and
// the orphans it gave the target (by a group or session leader, as their
// only candidate, or as the one whose stop began last), for the caller to
// record as adopted. The agent's
// pid is agent; inherited maps the processes it inherited to their start
// times.
func attribute(target candidate, others []candidate, agent int, inherited map[int]uint64, all []proc) (tree []proc, took []procKey) {
	at := attribution{
		agent: agent,
		// The others first: what another running child certainly owns is
		// never the target's.
		cands: append(slices.Clip(others), target),
		byPID: make(map[int]proc, len(all)),
		kids:  make(map[int][]int, len(all)),
		owner: make(map[int]int, len(all)),
	}
	for _, q := range all {
		at.byPID[q.PID] = q
		at.kids[q.PPID] = append(at.kids[q.PPID], q.PID)
	}
	at.claimLinked(all)
	var orphans []proc
	for _, q := range all {
		_, taken := at.owner[q.PID]
		if q.PPID == agent && !taken && !isInherited(inherited, q) {
			orphans = append(orphans, q)
		}
	}
	if len(orphans) > 0 {
		at.claimCgroups()
	}
	// Oldest first, so that a session or group leader is placed before the
	// orphans that run in its session or group.
	slices.SortFunc(orphans, func(a, b proc) int { return compareStart(a.Start, b.Start) })
	me := len(at.cands) - 1
	for _, q := range orphans {
		if _, taken := at.owner[q.PID]; taken {
			continue // in a child's cgroup, or a descendant of an orphan placed before it
		}
		if by, ok := at.orphanOwner(q); ok {
			at.claim(q.PID, by)
			if by == me {
				took = append(took, procKey{q.PID, q.Start})
			}
		}
	}
	for _, q := range all {
		if by, ok := at.owner[q.PID]; ok && by == me {
			tree = append(tree, q)
		}
	}
	return tree, took
}

// attribution is one run of attribute over a /proc listing.
type attribution struct {
	agent int
	cands []candidate // the target last
	byPID map[int]proc
	kids  map[int][]int // by parent
	// owner maps a pid to the index in cands of the child it belongs to:
	// not to that child's pid, which a reaped target may share with a
	// newer child.
	owner map[int]int
}

// claim gives pid and its descendants to cands[by], unless they have an
// owner already.
func (at *attribution) claim(pid, by int) {
	if _, taken := at.owner[pid]; taken || pid == at.agent || pid <= 1 {
		return // never ourselves or init
	}
	at.owner[pid] = by
	for _, k := range at.kids[pid] {
		at.claim(k, by)
	}
}

// claimLinked gives each candidate what it adopted, then itself and its
// group, each with their descendants.
func (at *attribution) claimLinked(all []proc) {
	for i, c := range at.cands {
		for _, k := range c.adopted {
			if q, ok := at.byPID[k.pid]; ok && q.Start == k.start {
				at.claim(q.PID, i)
			}
		}
	}
	for i, c := range at.cands {
		if _, alive := at.byPID[c.pid]; alive && !c.reaped {
			at.claim(c.pid, i)
		}
		if groupIsChilds(c, at.byPID) {
			for _, q := range all {
				if q.PGID == c.pid && q.Start >= c.start {
					at.claim(q.PID, i)
				}
			}
		}
	}
}

// claimCgroups gives the processes in each candidate's cgroup, with their
// descendants, to that candidate, unless they have an owner already.
func (at *attribution) claimCgroups() {
	for i, c := range at.cands {
		if c.cgroup == nil {
			continue
		}
		for _, pid := range c.cgroup() {
			if _, listed := at.byPID[pid]; listed {
				at.claim(pid, i)
			}
		}
	}
}

// orphanOwner returns the index in cands of the child an orphan q belongs
// to, when that can be decided (see the top of this file).
func (at *attribution) orphanOwner(q proc) (int, bool) {
	cands, me := at.cands, len(at.cands)-1
	for _, leader := range []int{q.PGID, q.SID} {
		if by, ok := at.owner[leader]; ok && q.Start >= at.byPID[leader].Start {
			return by, true // its group or session is led by a member of a tree
		}
		for i, c := range cands {
			if leader == c.pid && q.Start >= c.start && groupIsChilds(c, at.byPID) {
				return i, true // the child itself made the group or session
			}
		}
	}
	by, found := -1, 0
	for i, c := range cands {
		if c.start > q.Start {
			continue // started after the orphan: not its owner
		}
		if c.stopping == 0 && i != me {
			return 0, false // it might be this running child's
		}
		found++
		if by < 0 || c.stopping > cands[by].stopping {
			by = i
		}
	}
	if found == 1 && by == me {
		return by, true // the target is its only candidate
	}
	return by, by >= 0 && cands[by].stopping > 0
}

// groupIsChilds reports whether the process group numbered c.pid is still
// the one child c made. Until c is reaped its pid cannot be reused, so the
// group is c's. After that the number is free again once the group has no
// member left, and a new process given that pid may make a group of the
// same number; a live process with c's pid shows the number was reused, and
// then nothing in that group is c's. (A group can only be made by the
// process whose pid it bears, so a reused group always has had that
// process; one that already ended again is not detected, the window is
// that of a pid wrapping around twice.)
func groupIsChilds(c candidate, byPID map[int]proc) bool {
	if !c.reaped {
		return true
	}
	_, reused := byPID[c.pid]
	return !reused
}

func compareStart(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isInherited(inherited map[int]uint64, q proc) bool {
	start, ok := inherited[q.PID]
	return ok && start == q.Start
}

// treeGone reports, without scanning /proc, that nothing of the tree of p
// (which has exited) runs: its process group is empty and the agent has no
// child that could be an orphan of p. That suffices, since the chain of
// parents of any live descendant of p ends in a member of its group or in a
// child of the agent, to which orphans are reparented. It errs towards
// false, which only costs a scan.
func (r *Reaper) treeGone(p *Process) bool {
	// Signal 0 only probes: should the number name someone else's group by
	// now, the answer is false and the scan decides.
	if !r.exited(p) || syscall.Kill(-p.Pid, 0) != syscall.ESRCH {
		return false
	}
	return r.foreign || !r.mayHaveOrphans(p) // with foreign, only the group is reachable at all
}

// mayHaveOrphans reports, without scanning /proc, whether the agent has a
// child that could be an orphan of p's tree: one that is no live child,
// was not inherited, started after p, and is in none of the groups or
// sessions of the live children other than p (those are theirs, or, for
// p's own group while p is not reaped, reached by its group's signal).
// It errs towards true.
func (r *Reaper) mayHaveOrphans(p *Process) bool {
	// No child at all, the usual case once p was reaped: no orphan either.
	if !hasChildren() {
		return false
	}
	// Under mu no child is reaped (reap holds it across wait4): a child
	// released while the children files are read could make the kernel
	// skip the next one in the list.
	r.mu.Lock()
	kids, ok := r.children()
	reaped := p.reaped
	r.mu.Unlock()
	if !ok {
		return true
	}
	_, others := r.candidates(p)
	running := make(map[int]bool, len(others)+1)
	for _, c := range others {
		running[c.pid] = true
	}
	if !reaped {
		running[p.Pid] = true
	}
	for _, pid := range kids {
		if running[pid] {
			continue
		}
		q, ok := procfs.Stat(strconv.Itoa(pid))
		if ok && q.State != 'Z' && q.Start >= p.startTicks && !isInherited(r.inherited, q) &&
			!running[q.PGID] && !running[q.SID] {
			return true
		}
	}
	return false
}
