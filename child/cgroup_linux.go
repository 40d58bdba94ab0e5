package child

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Cgroups makes one cgroup v2 per child below one directory and removes
// them again. Their names carry the agent's identity,
// fifobridge-<pid namespace>-<pid>-<start time>-<seq>, so that the
// cgroups of an agent that died can be told from a live agent's (see
// leftovers).
type Cgroups struct {
	dir  string
	log  *slog.Logger
	self agentID
	// foreignProc: /proc is another PID namespace's, so no agent's
	// liveness can be checked there (leftovers are left alone).
	foreignProc bool
	seq         atomic.Uint64
	mu          sync.Mutex
	made        map[*Cgroup]bool // not removed yet
	closed      bool
	spare       *Cgroup // made by OpenCgroups, for the first child
}

// Cgroup is one child's cgroup.
type Cgroup struct {
	m    *Cgroups
	path string
	fd   int // the directory, for clone3's CLONE_INTO_CGROUP; -1 once closed; guarded by m.mu
}

// removeBusyFor is how long removing a cgroup that stays busy is retried.
const removeBusyFor = 2 * time.Second

// rmdirCgroup removes a cgroup directory; tests replace it to make it fail
// with EBUSY.
var rmdirCgroup = unix.Rmdir

// OpenCgroups checks that dir is a cgroup v2 directory in which the agent
// can make cgroups that have cgroup.kill (Linux 5.14), by making one. That
// one is the first child's (or removed by Close): making a cgroup and
// removing it again would cost every start a mkdir and an rmdir, which
// take the kernel's cgroup lock.
func OpenCgroups(dir string, log *slog.Logger) (*Cgroups, error) {
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
	m := &Cgroups{dir: dir, log: log, self: self, made: map[*Cgroup]bool{}, foreignProc: procSelfPID() != os.Getpid()}
	probe, err := m.New()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(probe.path, "cgroup.kill")); err != nil {
		probe.Remove()
		return nil, fmt.Errorf("cgroup %s: no cgroup.kill (Linux before 5.14?): %w", dir, err)
	}
	m.spare = probe
	return m, nil
}

// Dir is the directory the cgroups are made in.
func (m *Cgroups) Dir() string { return m.dir }

// New makes a new cgroup for one child.
func (m *Cgroups) New() (*Cgroup, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("make cgroup: closed")
	}
	if c := m.spare; c != nil {
		m.spare = nil
		return c, nil
	}
	path := filepath.Join(m.dir, m.self.name(m.seq.Add(1)))
	if err := unix.Mkdir(path, 0o755); err != nil {
		return nil, fmt.Errorf("make cgroup %s: %w", path, err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Rmdir(path)
		return nil, fmt.Errorf("open cgroup %s: %w", path, err)
	}
	c := &Cgroup{m: m, path: path, fd: fd}
	m.made[c] = true
	return c, nil
}

// Close kills and removes every cgroup still there; no New after it.
func (m *Cgroups) Close() {
	m.mu.Lock()
	m.closed = true
	left := make([]*Cgroup, 0, len(m.made))
	for c := range m.made {
		left = append(left, c)
	}
	m.mu.Unlock()
	for _, c := range left {
		c.Kill()
		c.WaitEmpty(time.Now().Add(killPatience))
		c.Remove()
	}
}

// closeFD closes the descriptor of the cgroup's directory, once.
func (c *Cgroup) closeFD() {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// Path is the cgroup's directory.
func (c *Cgroup) Path() string { return c.path }

// Kill ends every process of the cgroup and of the cgroups below it at
// once, forks in flight included (cgroup.kill).
func (c *Cgroup) Kill() error {
	return writeCgroupFile(filepath.Join(c.path, "cgroup.kill"), "1")
}

// Populated reports whether a process runs in the cgroup or below it.
func (c *Cgroup) Populated() bool { return populated(c.path) }

func populated(path string) bool {
	b, err := os.ReadFile(filepath.Join(path, "cgroup.events"))
	if err != nil {
		return false // removed
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0"
		}
	}
	return false
}

// Procs lists the pids in the cgroup itself.
func (c *Cgroup) Procs() []int { return cgroupProcs(c.path) }

func cgroupProcs(path string) []int {
	b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
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
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
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
// it; one that could not leaves it to Close.
func (c *Cgroup) Remove() {
	c.m.mu.Lock()
	if !c.m.made[c] {
		c.m.mu.Unlock()
		return
	}
	delete(c.m.made, c)
	c.m.mu.Unlock()
	c.closeFD()
	if removeCgroup(c.path, c.m.log) != nil {
		// Still busy (a process in uninterruptible sleep): Close tries
		// again before the agent exits; after Close, the next agent's
		// leftover sweep does.
		c.m.mu.Lock()
		if !c.m.closed {
			c.m.made[c] = true
		}
		c.m.mu.Unlock()
	}
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
