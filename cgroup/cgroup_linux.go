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
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"golang.org/x/sys/unix"
)

// Manager makes one cgroup v2 per child below one directory and removes
// them again. Their names carry the agent's identity,
// fifobridge-<pid namespace>-<pid>-<start time>-<seq>, and the agent's
// anchor, locked for its life, says that it lives, so that the cgroups of
// an agent that died can be told from a live agent's (see anchor and
// leftovers).
type Manager struct {
	dir  string
	log  *slog.Logger
	self agentID
	// anchor is the path of the agent's anchor, and anchorFD its
	// descriptor, which holds its lock; -1 once Close let it go.
	anchor   string
	anchorFD int
	// foreignProc: /proc is another PID namespace's, so no agent's
	// liveness can be checked there (leftovers are left alone).
	foreignProc bool
	seq         atomic.Uint64
	mu          sync.Mutex
	made        map[*Group]bool // not removed yet
	closed      bool
	spare       *Group // made by Open or Prepare, for the next child
	pidsMax     int    // each child's pids.max, or 0 for none (see pidsBudget)
}

// Group is one child's cgroup.
type Group struct {
	m    *Manager
	path string
	// fd is the directory, for clone3's CLONE_INTO_CGROUP, until the
	// child was cloned into it (CloseDirfd) or it is removed; -1 once
	// closed; guarded by m.mu. It holds no lock: the Manager's anchor
	// says that the cgroup is a live agent's.
	fd int
}

// removeBusyFor is how long removing a cgroup that stays busy is retried.
const removeBusyFor = 2 * time.Second

// rmdirCgroup removes a cgroup directory; tests replace it to make it fail
// with EBUSY.
var rmdirCgroup = unix.Rmdir

// Open checks that dir is a cgroup v2 directory in which the agent
// can make cgroups that have cgroup.kill (Linux 5.14), by making one: the
// agent's anchor, which Close removes.
func Open(dir string, log *slog.Logger) (*Manager, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", dir, err)
	}
	if fs.Type != unix.CGROUP2_SUPER_MAGIC {
		return nil, fmt.Errorf("cgroup %s: not a cgroup v2 directory", dir)
	}
	self, err := selfID()
	if err != nil {
		return nil, err
	}
	anchor, fd, err := makeAnchor(dir, self)
	if err != nil {
		return nil, err
	}
	m := &Manager{dir: dir, log: log, self: self, anchor: anchor, anchorFD: fd, made: map[*Group]bool{},
		foreignProc: procfs.SelfPID() != os.Getpid()}
	if _, err := os.Stat(filepath.Join(anchor, "cgroup.kill")); err != nil {
		m.Close()
		return nil, fmt.Errorf("cgroup %s: no cgroup.kill (Linux before 5.14?): %w", dir, err)
	}
	m.pidsMax = childPidsMax(dir)
	return m, nil
}

// childPidsMax is the pids.max of each child's cgroup below dir: when the
// pids controller is enabled for them (dir's cgroup.subtree_control names
// it) and limits dir or a cgroup above it, what the limit leaves beyond
// the tasks there now and the agent's reserve; else 0. Each child gets it
// alone: two children together may still exhaust the limit, and the
// agent's reserved threads are what then keeps it going.
func childPidsMax(dir string) int {
	b, err := procfs.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil || !slices.Contains(strings.Fields(string(b)), "pids") {
		return 0
	}
	headroom, limited := pidsHeadroom(dir)
	if !limited {
		return 0
	}
	return pidsBudget(headroom)
}

// PidsMax is each child's pids.max, or 0 when none is set.
func (m *Manager) PidsMax() int { return m.pidsMax }

// Dir is the directory the cgroups are made in.
func (m *Manager) Dir() string { return m.dir }

// New makes a new cgroup for one child, or hands out the one Prepare
// made, which no child has used.
func (m *Manager) New() (*Group, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("make cgroup: closed")
	}
	if c := m.spare; c != nil {
		m.spare = nil
		return c, nil
	}
	return m.newLocked()
}

// Prepare makes the cgroup the next New hands out, unless one is waiting
// already or the Manager is closed. A caller that expects another child
// soon (exec mode, while each request runs) so takes the mkdir off that
// child's start; the kernel's work of the first fork into a new cgroup
// stays where it is. Close removes the waiting cgroup.
func (m *Manager) Prepare() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.spare != nil {
		return nil
	}
	c, err := m.newLocked()
	if err != nil {
		return err
	}
	m.spare = c
	return nil
}

// newLocked makes a new cgroup; m.mu is held.
func (m *Manager) newLocked() (*Group, error) {
	for try := 0; ; try++ {
		path := filepath.Join(m.dir, m.self.name(m.seq.Add(1)))
		fd, err := makeCgroup(path, false)
		if errors.Is(err, errLockLost) && try < 3 {
			// Removed before it was opened: by no sweep of this version
			// while the anchor is locked, but one of an older version in
			// another PID namespace may take it for a leftover.
			continue
		}
		if err != nil {
			return nil, err
		}
		if m.pidsMax > 0 {
			if err := writeCgroupFile(filepath.Join(path, "pids.max"), strconv.Itoa(m.pidsMax)); err != nil {
				unix.Close(fd)
				unix.Rmdir(path)
				return nil, err
			}
		}
		c := &Group{m: m, path: path, fd: fd}
		m.made[c] = true
		return c, nil
	}
}

// Close kills and removes every cgroup still there, then the anchor, and
// lets go of the anchor's lock; no New after it. When a cgroup cannot be
// removed, the anchor stays with it, for the next agent's sweep.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.spare = nil // in made: removed below
	left := make([]*Group, 0, len(m.made))
	for c := range m.made {
		left = append(left, c)
	}
	m.mu.Unlock()
	removed := true
	for _, c := range left {
		c.Kill()
		c.WaitEmpty(time.Now().Add(KillPatience))
		removed = c.remove() && removed
	}
	m.mu.Lock()
	fd := m.anchorFD
	m.anchorFD = -1
	m.mu.Unlock()
	if fd < 0 {
		return // closed before
	}
	if removed {
		removeCgroup(m.anchor, m.log)
	}
	unix.Close(fd)
}

// closeFD closes the descriptor of the cgroup's directory, once.
func (c *Group) closeFD() {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// Path is the cgroup's directory.
func (c *Group) Path() string { return c.path }

// Dirfd is the cgroup directory's descriptor, for clone3's
// CLONE_INTO_CGROUP; it stays open until CloseDirfd or Remove.
func (c *Group) Dirfd() int { return c.fd }

// CloseDirfd closes the descriptor Dirfd gave, once a child was cloned
// into the cgroup: the cgroup needs none while it lives (it is killed,
// watched and removed by its path).
func (c *Group) CloseDirfd() { c.closeFD() }

// AllProcs lists the processes in the cgroup and below it.
func (c *Group) AllProcs() []int { return cgroupProcsDeep(c.path) }

// Kill ends every process of the cgroup and of the cgroups below it at
// once, forks in flight included (cgroup.kill).
func (c *Group) Kill() error {
	return writeCgroupFile(filepath.Join(c.path, "cgroup.kill"), "1")
}

// Populated reports whether a process runs in the cgroup or below it.
func (c *Group) Populated() bool { return populated(c.path) }

func populated(path string) bool {
	b, err := procfs.ReadFile(filepath.Join(path, "cgroup.events"))
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV) {
		return false // removed
	}
	if err != nil {
		return true // unknown: a stop goes on to kill it
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0"
		}
	}
	return false
}

// Procs lists the pids in the cgroup itself.
func (c *Group) Procs() []int { return cgroupProcs(c.path) }

func cgroupProcs(path string) []int {
	b, err := procfs.ReadFile(filepath.Join(path, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func writeCgroupFile(path, v string) error {
	fd, err := procfs.Open(path, unix.O_WRONLY)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(v)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Remove removes the cgroup once it is empty. When rmdir fails with EBUSY
// it logs a warning naming the cgroup, kills what is in it again and
// retries for up to removeBusyFor. It is a no-op after a call that removed
// it; one that could not leaves it to Close, and after Close to the next
// agent's leftover sweep. Its directory's descriptor is closed once it is
// gone.
func (c *Group) Remove() { c.remove() }

// remove is Remove, and reports whether the cgroup is gone (or was
// before).
func (c *Group) remove() bool {
	c.m.mu.Lock()
	if !c.m.made[c] {
		c.m.mu.Unlock()
		return true
	}
	delete(c.m.made, c)
	c.m.mu.Unlock()
	if removeCgroup(c.path, c.m.log) != nil {
		// Still busy (a process in uninterruptible sleep).
		c.m.mu.Lock()
		keep := !c.m.closed
		if keep {
			c.m.made[c] = true
		}
		c.m.mu.Unlock()
		if keep {
			return false
		}
		c.closeFD()
		return false
	}
	c.closeFD()
	return true
}

// removeCgroup removes the cgroup at path and any cgroups below it, with
// removeBusyFor of patience for a cgroup that stays busy.
func removeCgroup(path string, log *slog.Logger) error {
	giveUp := time.Now().Add(removeBusyFor)
	warned := false
	for {
		err := rmdirTree(path)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || !time.Now().Before(giveUp) {
			log.Warn("cannot remove cgroup", "cgroup", path, "err", err)
			return err
		}
		if !warned {
			log.Warn("cgroup busy at removal; killing its processes again and retrying", "cgroup", path)
			warned = true
		}
		writeCgroupFile(filepath.Join(path, "cgroup.kill"), "1")
		waitEmpty(path, time.Now().Add(min(time.Until(giveUp), emptyRecheck)))
	}
}

// rmdirTree removes the cgroup at path after the cgroups a child made
// below it, deepest first.
func rmdirTree(path string) error {
	err := rmdirCgroup(path)
	if !errors.Is(err, unix.EBUSY) {
		return err
	}
	entries, rerr := os.ReadDir(path)
	if rerr != nil {
		return err
	}
	sub := false
	for _, e := range entries {
		if e.IsDir() {
			sub = true
			rmdirTree(filepath.Join(path, e.Name()))
		}
	}
	if !sub {
		return err
	}
	return rmdirCgroup(path)
}
