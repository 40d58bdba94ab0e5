package child

import (
	"os"
	"path/filepath"
	"time"
)

// Leftovers: an agent that is SIGKILLed (and is not PID 1) cannot remove
// its cgroups, and the processes in them that were not its direct children
// (which get the parent-death signal) keep running. The next agent that
// uses the same directory ends them: a cgroup named by an agent of the
// same PID namespace whose pid and start time no longer name a live
// process is a leftover. A cgroup of a live agent, or of an agent in
// another PID namespace (whose liveness cannot be told from here), is left
// alone.

// RemoveLeftovers kills and removes the cgroups that dead agents left in
// the directory, and logs how many processes it ended. It returns the
// number of cgroups removed and of processes ended.
func (m *Cgroups) RemoveLeftovers() (cgroups, procs int) {
	if m.foreignProc {
		m.log.Info("not looking for cgroups of dead agents: /proc belongs to another PID namespace", "dir", m.dir)
		return 0, 0
	}
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		m.log.Warn("cannot list cgroups to look for leftovers", "dir", m.dir, "err", err)
		return 0, 0
	}
	for _, e := range entries {
		a, ok := parseCgroupName(e.Name())
		if !e.IsDir() || !ok || a.pid == m.self.pid && a.start == m.self.start && a.pidNS == m.self.pidNS {
			continue
		}
		if alive, known := a.alive(m.self.pidNS); alive || !known {
			continue
		}
		path := filepath.Join(m.dir, e.Name())
		procs += countProcs(path)
		writeCgroupFile(filepath.Join(path, "cgroup.kill"), "1")
		waitEmpty(path, time.Now().Add(killPatience))
		if removeCgroup(path, m.log) == nil {
			cgroups++
		}
	}
	if cgroups > 0 {
		m.log.Info("removed cgroups a dead agent left; ended their processes",
			"dir", m.dir, "cgroups", cgroups, "processes", procs)
	}
	return cgroups, procs
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
