//go:build linux

// Package cgroup is the agent's cgroup v2 manager (the contract's
// "Containment"): one cgroup per child below one directory, the leftovers
// of agents that died, and the pids budget that keeps a child's fork bomb
// from reaching the agent. Package child starts children in these cgroups
// and stops what they hold.
//
// Guarantees:
//
//   - Every cgroup a Manager makes is named by the agent. Open makes one
//     empty cgroup first, the agent's anchor, and holds its lock (flock
//     on its directory) until Close, which removes it after the others;
//     the lock goes with the agent. An anchor a sweep took between its
//     mkdir and its lock is made again under the next try's name. A
//     child's cgroup holds no lock, and its directory's descriptor only
//     until the child is cloned into it (Group.CloseDirfd): however many
//     children run, the agent holds one descriptor for its cgroups.
//   - Group.Remove removes an empty cgroup; at EBUSY it kills what is in
//     it again and retries for removeBusyFor, with a warning naming the
//     cgroup. Manager.Close kills and removes every cgroup it made that is
//     left, then the anchor: no cgroup the agent made outlives it, but
//     one that stays busy, which keeps the anchor for the next agent's
//     sweep.
//   - RemoveLeftovers ends and removes only cgroups whose name says an
//     agent made them, never its own: an agent's when the agent's anchor
//     is there and its lock is free (the sweep holds it meanwhile and
//     removes the anchor last), whatever PID namespace made them; for an
//     agent without an anchor (an older version, which locked each of its
//     cgroups), a cgroup whose own lock is free and whose name is of no
//     live process of this PID namespace. Never a live agent's.
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
