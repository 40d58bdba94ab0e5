package cgroup

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"golang.org/x/sys/unix"
)

// A pids budget on cgroup v1, for a container that has the v1 pids
// controller (Docker's --pids-limit on a cgroup v1 host): a cgroup below
// the agent's own in the pids hierarchy, with a pids.max that leaves the
// agent its reserve, holds every child. v1 has no CLONE_INTO_CGROUP, but
// it places threads, not only processes: the thread that forks every
// child (the Reaper's spawn thread) moves into that cgroup for good, and
// each child is born in it. The thread makes no thread of its own (the
// runtime makes new threads from its template thread for a locked one),
// so nothing else of the agent counts there.

// PidsLimit is the cgroup v1 pids cgroup the children start in.
type PidsLimit struct {
	onSpawnThread func(func() error) error
	log           *slog.Logger
	own           string // the agent's own pids cgroup
	path          string
	fd            int // its directory, locked (see lock_linux.go)
	budget        int
}

// ErrNoPidsLimit: no pids controller limits the agent, or none can be
// set below it; the children run without a budget.
var ErrNoPidsLimit = errors.New("no pids limit")

// LimitPids puts the children under a pids budget in the cgroup v1
// pids hierarchy, when the agent's own pids cgroup there is limited and
// writable: a cgroup below it, with pids.max set to what the limit leaves
// beyond the agent's tasks and its reserve, that the thread that forks
// every child joins (onSpawnThread runs a function on that thread: see
// child.Reaper.LimitPids).
// Leftovers of dead agents there are ended and removed first.
func LimitPids(log *slog.Logger, onSpawnThread func(func() error) error) (*PidsLimit, error) {
	own, err := ownCgroupV1("pids")
	if err != nil {
		return nil, err
	}
	headroom, limited := pidsHeadroom(own)
	if !limited {
		return nil, fmt.Errorf("%w: the agent's pids cgroup %s has none", ErrNoPidsLimit, own)
	}
	budget := pidsBudget(headroom)
	if budget == 0 {
		return nil, fmt.Errorf("%w: only %d tasks left below the agent's pids.max", ErrNoPidsLimit, headroom)
	}
	self, err := selfID()
	if err != nil {
		return nil, err
	}
	removeLeftoversV1(own, self, log)
	path := filepath.Join(own, self.name(0))
	fd, err := makeLocked(path)
	if err != nil {
		return nil, err
	}
	l := &PidsLimit{onSpawnThread: onSpawnThread, log: log, own: own, path: path, fd: fd, budget: budget}
	err = writeCgroupFile(filepath.Join(path, "pids.max"), strconv.Itoa(budget))
	if err == nil {
		err = onSpawnThread(func() error { return joinTasks(path) })
	}
	if err != nil {
		l.remove()
		return nil, err
	}
	return l, nil
}

// Budget is the children's pids.max.
func (l *PidsLimit) Budget() int { return l.budget }

// Path is the children's pids cgroup.
func (l *PidsLimit) Path() string { return l.path }

// Close brings the spawn thread back to the agent's own pids cgroup and
// removes the children's, ending what is still in it. Call it after every
// child was stopped.
func (l *PidsLimit) Close() {
	if err := l.onSpawnThread(func() error { return joinTasks(l.own) }); err != nil {
		l.log.Warn("cannot move the spawn thread back to the agent's pids cgroup", "cgroup", l.own, "err", err)
	}
	l.remove()
}

func (l *PidsLimit) remove() {
	if n := killProcsV1(l.path); n > 0 {
		l.log.Warn("ended processes left in the children's pids cgroup", "cgroup", l.path, "processes", n)
	}
	if err := unix.Rmdir(l.path); err != nil && !errors.Is(err, unix.ENOENT) {
		l.log.Warn("cannot remove the children's pids cgroup", "cgroup", l.path, "err", err)
	}
	unix.Close(l.fd)
}

// joinTasks moves the calling thread into the v1 cgroup at path.
func joinTasks(path string) error {
	return writeCgroupFile(filepath.Join(path, "tasks"), strconv.Itoa(unix.Gettid()))
}

// killProcsV1 SIGKILLs the processes in the v1 cgroup at path until it is
// empty, or for KillPatience (v1 has no cgroup.kill), and returns how many
// there were at first.
func killProcsV1(path string) int {
	first := -1
	giveUp := time.Now().Add(KillPatience)
	for {
		pids := slices.DeleteFunc(cgroupProcs(path), func(pid int) bool { return pid <= 0 })
		if first < 0 {
			first = len(pids)
		}
		if len(pids) == 0 || !time.Now().Before(giveUp) {
			return first
		}
		for _, pid := range pids {
			unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// removeLeftoversV1 ends and removes the pids cgroups of dead agents below
// own: those whose lock is free.
func removeLeftoversV1(own string, self agentID, log *slog.Logger) {
	entries, err := os.ReadDir(own)
	if err != nil {
		return
	}
	for _, e := range entries {
		a, anchor, _, ok := parseCgroupName(e.Name())
		if !e.IsDir() || !ok || anchor || a == self {
			continue
		}
		path := filepath.Join(own, e.Name())
		fd := lockFree(path)
		if fd < 0 {
			continue
		}
		n := killProcsV1(path)
		if err := unix.Rmdir(path); err == nil {
			log.Info("removed the pids cgroup a dead agent left; ended its processes", "cgroup", path, "processes", n)
		}
		unix.Close(fd)
	}
}

// ownCgroupV1 returns the directory of the agent's cgroup in the v1
// hierarchy of controller, from /proc/self/cgroup and mountinfo.
func ownCgroupV1(controller string) (string, error) {
	cg, err := procfs.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("read own cgroup: %w", err)
	}
	path, ok := parseSelfCgroupV1(string(cg), controller)
	if !ok {
		return "", fmt.Errorf("%w: no cgroup v1 %s hierarchy", ErrNoPidsLimit, controller)
	}
	mi, err := procfs.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mounts: %w", err)
	}
	dir, ok := cgroupDir(path, parseCgroup1Mounts(string(mi), controller))
	if !ok {
		return "", fmt.Errorf("%w: the agent's %s cgroup %s is not mounted", ErrNoPidsLimit, controller, path)
	}
	return dir, nil
}

// parseSelfCgroupV1 returns the path of the line of a /proc/PID/cgroup
// file whose v1 hierarchy has controller ("8:pids:/docker/abc").
func parseSelfCgroupV1(data, controller string) (string, bool) {
	for _, line := range strings.Split(data, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && f[0] != "0" && slices.Contains(strings.Split(f[1], ","), controller) {
			return f[2], f[2] != ""
		}
	}
	return "", false
}

// parseCgroup1Mounts returns the mounts of the cgroup v1 hierarchy that
// has controller, from a mountinfo file (see parseCgroup2Mounts): file
// system "cgroup" with controller among its super options.
func parseCgroup1Mounts(data, controller string) []cgroup2Mount {
	var mounts []cgroup2Mount
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 6 || sep+3 >= len(f) || f[sep+1] != "cgroup" {
			continue
		}
		if slices.Contains(strings.Split(f[sep+3], ","), controller) {
			mounts = append(mounts, cgroup2Mount{root: unescapeMount(f[3]), point: unescapeMount(f[4])})
		}
	}
	return mounts
}
