package child

import (
	"syscall"

	"github.com/fifobridge/fifobridge/internal/procfs"
)

// The members of a child's process group that left its cgroup. A process
// may move itself to another cgroup (writing its pid to another
// cgroup.procs) and stay in the child's group: cgroup.kill no longer
// reaches it, the group's signal does. Until the child is reaped the group
// is signalled as a whole (its id cannot name another group then); after
// that, its members are found in /proc and signalled one by one through
// pidfds, as in a tree stop without cgroups.

// groupLeft returns the members of p's process group that run outside the
// cgroup listing procs, once p has been reaped; before, it returns nil,
// since ask and signalTree reach them through the group. It scans /proc
// only when a group with p's id still exists.
func (r *Reaper) groupLeft(p *Process, procs []proc) []proc {
	r.mu.Lock()
	reaped := p.reaped
	r.mu.Unlock()
	if !reaped || r.foreign || syscall.Kill(-p.Pid, 0) == syscall.ESRCH {
		return nil
	}
	in := make(map[int]bool, len(procs))
	for _, q := range procs {
		in[q.PID] = true
	}
	all := procfs.Processes()
	byPID := make(map[int]proc, len(all))
	for _, q := range all {
		byPID[q.PID] = q
	}
	if !groupIsChilds(candidate{pid: p.Pid, start: p.startTicks, reaped: true}, byPID) {
		return nil // the number names a newer process's group
	}
	var left []proc
	for _, q := range all {
		if q.PGID == p.Pid && q.Start >= p.startTicks && !in[q.PID] {
			left = append(left, q)
		}
	}
	return left
}

// cgroupTree lists p's tree in a cgroup: the processes of its cgroup and
// of the cgroups below, and the members of its group that left them.
func (r *Reaper) cgroupTree(p *Process) []proc {
	procs := cgroupProcList(p.cg)
	return append(procs, r.groupLeft(p, procs)...)
}
