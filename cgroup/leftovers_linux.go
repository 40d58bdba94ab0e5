package cgroup

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Leftovers: an agent that is SIGKILLed (and is not PID 1) cannot remove
// its cgroups, and the processes in them that were not its direct children
// (which get the parent-death signal) keep running. The next agent that
// uses the same directory ends them, from whatever PID namespace. The
// cgroups of an agent, told by their names, are leftovers when the
// agent's anchor (see anchor_linux.go) is there and its lock is free: a
// live agent holds it from before it makes any other cgroup. The sweep
// holds that lock while it ends and removes them, so that no other
// agent's sweep takes them as well, and removes the anchor last, once
// the rest is gone (a later sweep finds the rest by it). An agent that
// has no anchor is of an older version, which locked each of its
// cgroups, or one whose anchor is gone with its children: each of its
// cgroups is then a leftover when its own lock is free, unless its name
// says it is of a live process of this PID namespace.

// agentCgroups are the cgroups of one agent that a listing shows.
type agentCgroups struct {
	children []string // names
	anchors  []uint64 // tries
}

// RemoveLeftovers kills and removes the cgroups that dead agents left in
// the directory, and logs how many processes it ended. It returns the
// number of cgroups removed (anchors included) and of processes ended.
func (m *Manager) RemoveLeftovers() (cgroups, procs int) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		m.log.Warn("cannot list cgroups to look for leftovers", "dir", m.dir, "err", err)
		return 0, 0
	}
	agents := map[agentID]*agentCgroups{}
	var order []agentID
	for _, e := range entries {
		a, anchor, n, ok := parseCgroupName(e.Name())
		if !e.IsDir() || !ok || a == m.self {
			continue
		}
		if agents[a] == nil {
			agents[a] = &agentCgroups{}
			order = append(order, a)
		}
		if anchor {
			agents[a].anchors = append(agents[a].anchors, n)
		} else {
			agents[a].children = append(agents[a].children, e.Name())
		}
	}
	for _, a := range order {
		c, p := m.removeAgentsLeft(a, agents[a])
		cgroups += c
		procs += p
	}
	if cgroups > 0 {
		m.log.Info("removed cgroups a dead agent left; ended their processes",
			"dir", m.dir, "cgroups", cgroups, "processes", procs)
	}
	return cgroups, procs
}

// removeAgentsLeft ends and removes agent a's cgroups, those listed,
// when they are leftovers, and returns how many cgroups it removed and
// how many processes it ended.
func (m *Manager) removeAgentsLeft(a agentID, listed *agentCgroups) (cgroups, procs int) {
	anchors, held := lockAnchors(m.dir, a, listed.anchors)
	if held {
		return 0, 0 // a live agent's, or another sweep's
	}
	defer unlockAnchors(anchors)
	if len(anchors) == 0 {
		for _, name := range listed.children {
			n, removed := m.removeIfLeft(a, filepath.Join(m.dir, name))
			procs += n
			if removed {
				cgroups++
			}
		}
		return cgroups, procs
	}
	if m.aliveHere(a) {
		return 0, 0 // between its anchor's mkdir and its lock
	}
	// Listed before the anchor's lock was taken: a child cgroup made
	// after it would be a live agent's, which this lock rules out.
	left := false
	for _, name := range listed.children {
		n, removed := m.end(filepath.Join(m.dir, name))
		procs += n
		if removed {
			cgroups++
		} else {
			left = true
		}
	}
	if left {
		return cgroups, procs // the anchor stays: a later sweep finds the rest by it
	}
	for _, l := range anchors {
		if removeCgroup(l.path, m.log) == nil {
			cgroups++
		}
	}
	return cgroups, procs
}

// removeIfLeft ends and removes the cgroup at path, named by agent a that
// has no anchor, when it is a leftover, holding its lock meanwhile so
// that no other agent's sweep takes it as well. It returns the processes
// it ended and whether it removed the cgroup.
func (m *Manager) removeIfLeft(a agentID, path string) (procs int, removed bool) {
	fd := lockFree(path)
	if fd < 0 {
		return 0, false // a live agent's, or gone already
	}
	defer unix.Close(fd)
	if m.aliveHere(a) {
		return 0, false // a live agent that takes no locks
	}
	return m.end(path)
}

// aliveHere reports whether agent a is known to run: it is of this PID
// namespace, where its pid and start time can be checked.
func (m *Manager) aliveHere(a agentID) bool {
	if m.foreignProc {
		return false
	}
	alive, known := a.alive(m.self.pidNS)
	return alive && known
}

// end kills what the cgroup at path holds and removes it; it returns the
// processes it ended and whether the cgroup is gone.
func (m *Manager) end(path string) (procs int, removed bool) {
	procs = countProcs(path)
	writeCgroupFile(filepath.Join(path, "cgroup.kill"), "1")
	waitEmpty(path, time.Now().Add(KillPatience))
	return procs, removeCgroup(path, m.log) == nil
}

// countProcs counts the processes in the cgroup at path and below it.
func countProcs(path string) int { return len(cgroupProcsDeep(path)) }

// cgroupProcsDeep lists the pids in the cgroup at path and below it.
func cgroupProcsDeep(path string) []int {
	pids := cgroupProcs(path)
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if e.IsDir() {
			pids = append(pids, cgroupProcsDeep(filepath.Join(path, e.Name()))...)
		}
	}
	return pids
}
