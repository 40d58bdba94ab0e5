package child

// A child's tree with a cgroup is what its cgroup holds, and what a /proc
// scan attributes to it as without cgroups (see tree_linux.go): members of
// its process group and descendants that moved to another cgroup, and the
// orphans reparented to the agent that are its, such as a grandchild that
// double-forked, called setsid and left the cgroup. cgroup.kill ends what
// the cgroup holds at the timeout, forks in flight included; the scan makes
// the stop signal and SIGKILL reach what left it. The scan is skipped while
// nothing of the tree can run outside the cgroup: before the child is
// reaped its group is signalled as a whole and, with no orphan of it among
// the agent's children, whatever left the cgroup still descends from a
// process in it, and shows as an orphan once that one is gone; after,
// treeGone says when.

// cgroupTree lists p's tree: the processes of its cgroup and of the
// cgroups below, and those that a scan attributes to p (see outside).
func (r *Reaper) cgroupTree(p *Process) []proc {
	procs := cgroupProcList(p.cg)
	in := make(map[int]bool, len(procs))
	for _, q := range procs {
		in[q.PID] = true
	}
	for _, q := range r.outside(p) {
		if !in[q.PID] {
			procs = append(procs, q)
		}
	}
	return procs
}

// outside returns what a /proc scan attributes to p's tree, where a
// process that left p's cgroup may be; nil, without a scan, when none can
// be (see the top of this file). What it returns may include processes
// still in the cgroup.
func (r *Reaper) outside(p *Process) []proc {
	if r.foreign {
		return nil // pids in /proc are another namespace's; only the group is reachable
	}
	if r.exited(p) {
		if r.treeGone(p) {
			return nil
		}
	} else if !r.mayHaveOrphans(p) {
		return nil
	}
	return r.tree(p)
}
