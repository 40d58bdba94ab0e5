package cgroup

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fifobridge/fifobridge/internal/procfs"
)

// How many tasks (processes and threads) a pids controller lets the
// agent's cgroup have: a budget for the children that leaves the agent a
// reserve, so that a child's fork bomb meets its own limit before the
// agent's. Each cgroup's pids.max limits it and everything below it, so
// what a cgroup may still gain is the least headroom (pids.max less
// pids.current) of it and of every cgroup above it.

// pidsReserve is how many tasks the agent keeps for itself beyond those it
// has when the budget is set: threads the runtime may still make, and a
// child of its own.
const pidsReserve = 8

// minPidsBudget is the smallest budget worth setting: below it the limit
// is too tight to share, and children run without one.
const minPidsBudget = 4

// pidsHeadroom returns how many more tasks the cgroup at dir may have: the
// least pids.max less pids.current of dir and of the directories above it
// that have a pids.max (the root of a hierarchy has none). limited is
// false when none of them sets a limit.
func pidsHeadroom(dir string) (headroom int, limited bool) {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		max, ok := readPidsValue(filepath.Join(p, "pids.max"))
		if !ok {
			return headroom, limited // above the hierarchy, or its root
		}
		if max >= 0 {
			cur, _ := readPidsValue(filepath.Join(p, "pids.current"))
			if h := max - max0(cur); !limited || h < headroom {
				headroom, limited = h, true
			}
		}
		if filepath.Dir(p) == p {
			return headroom, limited
		}
	}
}

func max0(n int) int { return max(n, 0) }

// PidsHeadroom returns how many more tasks the agent's own cgroups may
// have (its cgroup v2 and its cgroup in the v1 pids hierarchy, and every
// cgroup above them), and whether a pids controller limits them at all.
func PidsHeadroom() (headroom int, limited bool) {
	var dirs []string
	if dir, err := Own(); err == nil {
		dirs = append(dirs, dir)
	}
	if dir, err := ownCgroupV1("pids"); err == nil {
		dirs = append(dirs, dir)
	}
	for _, dir := range dirs {
		if h, ok := pidsHeadroom(dir); ok && (!limited || h < headroom) {
			headroom, limited = h, true
		}
	}
	return headroom, limited
}

// readPidsValue reads a pids.max or pids.current file: -1 for "max".
func readPidsValue(path string) (int, bool) {
	b, err := procfs.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// pidsBudget is the limit for the children of a cgroup with headroom:
// what the agent leaves them, or 0 when that is too little to share.
func pidsBudget(headroom int) int {
	if b := headroom - pidsReserve; b >= minPidsBudget {
		return b
	}
	return 0
}
