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
// uses the same directory ends them, from whatever PID namespace: a cgroup
// whose name says an agent made it and whose lock (see lock_linux.go)
// nobody holds is a leftover. A live agent holds the locks of all its
// cgroups. A cgroup without a lock, as an agent of an older version made
// them, whose name says it is of a live process of this PID namespace is
// left alone as well.

// RemoveLeftovers kills and removes the cgroups that dead agents left in
// the directory, and logs how many processes it ended. It returns the
// number of cgroups removed and of processes ended.
func (m *Manager) RemoveLeftovers() (cgroups, procs int) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		m.log.Warn("cannot list cgroups to look for leftovers", "dir", m.dir, "err", err)
		return 0, 0
	}
	for _, e := range entries {
		a, ok := parseCgroupName(e.Name())
		if !e.IsDir() || !ok || a == m.self {
			continue
		}
		path := filepath.Join(m.dir, e.Name())
		n, removed := m.removeIfLeft(a, path)
		procs += n
		if removed {
			cgroups++
		}
	}
	if cgroups > 0 {
		m.log.Info("removed cgroups a dead agent left; ended their processes",
			"dir", m.dir, "cgroups", cgroups, "processes", procs)
	}
	return cgroups, procs
}

// removeIfLeft ends and removes the cgroup at path, named by agent a, when
// it is a leftover, holding its lock meanwhile so that no other agent's
// sweep takes it as well. It returns the processes it ended and whether it
// removed the cgroup.
func (m *Manager) removeIfLeft(a agentID, path string) (procs int, removed bool) {
	fd := lockFree(path)
	if fd < 0 {
		return 0, false // a live agent's, or gone already
	}
	defer unix.Close(fd)
	if !m.foreignProc {
		if alive, known := a.alive(m.self.pidNS); alive && known {
			return 0, false // a live agent that takes no locks
		}
	}
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
