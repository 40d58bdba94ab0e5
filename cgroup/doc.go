//go:build linux

// Package cgroup is the agent's cgroup v2 manager (the contract's
// "Containment"): one cgroup per child below one directory, the leftovers
// of agents that died, and the pids budget that keeps a child's fork bomb
// from reaching the agent. Package child starts children in these cgroups
// and stops what they hold.
//
// Guarantees:
//
//   - Every cgroup a Manager makes is locked (flock on its directory) from
//     right after its mkdir until it is removed, and the lock goes with the
//     agent. A cgroup a sweep removed between the mkdir and the lock is
//     made again under a new name.
//   - Group.Remove removes an empty cgroup; at EBUSY it kills what is in
//     it again and retries for removeBusyFor, with a warning naming the
//     cgroup. Manager.Close kills and removes every cgroup it made that is
//     left: no cgroup the agent made outlives it.
//   - RemoveLeftovers ends and removes only cgroups whose name says an
//     agent made them and whose lock is free, whatever PID namespace made
//     them: never a live agent's.
//   - Waiting for a cgroup to empty sleeps on cgroup.events (a watch of
//     the agent's one inotify instance, package watch), with a deadline;
//     the waits of one EmptyWatch share one watch, made by the first that
//     finds the cgroup populated and ended by Close, which costs no wait.
//     When no watch can be made, the waits read the file instead: waiting
//     never fails for want of a descriptor.
//   - Where a pids controller limits the agent, the children's budget
//     (PidsLimit on cgroup v1, the children's pids.max on v2) leaves the
//     agent a reserve.
//   - Files of cgroupfs are read and written through internal/procfs's
//     descriptor reserve, so that an agent out of descriptors can still
//     kill and remove a cgroup.
package cgroup
