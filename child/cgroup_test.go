package child

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testCgroupDir makes a cgroup of its own for one test below the test
// process's cgroup, and removes it afterwards. Without a writable cgroup
// v2 the test is skipped, or fails with FIFOBRIDGE_REQUIRE_PRIVILEGED=1.
func testCgroupDir(t *testing.T) string {
	t.Helper()
	own, err := OwnCgroup()
	if err == nil {
		dir := filepath.Join(own, fmt.Sprintf("fbtest-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
		if err = os.Mkdir(dir, 0o755); err == nil {
			t.Cleanup(func() {
				if err := unix.Rmdir(dir); err != nil {
					t.Errorf("remove test cgroup: %v", err)
				}
			})
			return dir
		}
	}
	if os.Getenv("FIFOBRIDGE_REQUIRE_PRIVILEGED") == "1" {
		t.Fatalf("needs a writable cgroup v2: %v", err)
	}
	t.Skipf("needs a writable cgroup v2: %v", err)
	return ""
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func openTestCgroups(t *testing.T) (*Cgroups, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	m, err := OpenCgroups(testCgroupDir(t), slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, logs
}

// cgroupsIn lists the cgroups below dir.
func cgroupsIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestCgroupStopTree starts a tree whose processes ignore TERM, one in a
// session of its own, in a cgroup: the stop escalates to cgroup.kill,
// nothing is left, and the cgroup is gone.
func TestCgroupStopTree(t *testing.T) {
	m, _ := openTestCgroups(t)
	mark := "cgstop"
	spec := helperSpec(t, mark, "tree", "stay")
	spec.Cgroups = m
	p, err := testReaper.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	if cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p.Pid)); !strings.Contains(string(cg), cgroupPrefix) {
		t.Fatalf("child is not in its own cgroup: %s", cg)
	}
	// The three sleepers must ignore TERM before the stop, or TERM alone
	// would end them.
	deadline := time.Now().Add(10 * time.Second)
	for ignoringTerm(marked(mark)) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the tree's sleepers did not come to ignore TERM")
		}
		time.Sleep(10 * time.Millisecond)
	}
	st, killed := testReaper.StopKilled(p, syscall.SIGTERM, 200*time.Millisecond)
	if !killed || st.Signal() != syscall.SIGKILL && st.Signal() != syscall.SIGTERM {
		t.Errorf("stop: status %v, killed %v; want killed", st, killed)
	}
	checkGone(t, mark)
	if left := cgroupsIn(t, m.Dir()); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
}

// TestCgroupFailedStart leaves no cgroup behind when the program cannot
// start.
func TestCgroupFailedStart(t *testing.T) {
	m, _ := openTestCgroups(t)
	spec := helperSpec(t, "cgfail", "exit", "0")
	spec.Program, spec.Path, spec.Cgroups = "/nonexistent/program", "/nonexistent/program", m
	if _, err := testReaper.Start(spec); err == nil {
		t.Fatal("started a program that does not exist")
	}
	if left := cgroupsIn(t, m.Dir()); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
}

// TestCgroupRemoveBusy makes rmdir fail with EBUSY (the seam): the
// removal is retried, succeeds, and a warning names the cgroup.
func TestCgroupRemoveBusy(t *testing.T) {
	m, logs := openTestCgroups(t)
	failures := 3
	rmdirCgroup = func(path string) error {
		if failures > 0 {
			failures--
			return unix.EBUSY
		}
		return unix.Rmdir(path)
	}
	defer func() { rmdirCgroup = unix.Rmdir }()
	spec := helperSpec(t, "cgbusy", "sleep")
	spec.Cgroups = m
	p, err := testReaper.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	path := p.cg.path
	testReaper.Stop(p, syscall.SIGTERM, time.Second)
	if failures != 0 {
		t.Errorf("rmdir failed %d times less than asked", failures)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup %s not removed: %v", path, err)
	}
	if !strings.Contains(logs.String(), "cgroup busy") || !strings.Contains(logs.String(), path) {
		t.Errorf("no warning naming the cgroup; log:\n%s", logs.String())
	}
	checkGone(t, "cgbusy")
}

// TestCgroupLeftovers ends the processes in the cgroups of agents that are
// gone, of this PID namespace or another: their locks are free. It leaves
// alone the cgroup of a live agent of another namespace (its lock is held)
// and one without a lock named by a live process of this namespace.
func TestCgroupLeftovers(t *testing.T) {
	m, logs := openTestCgroups(t)
	dead := agentID{pidNS: m.self.pidNS, pid: m.self.pid, start: m.self.start + 1}
	deadOther := agentID{pidNS: m.self.pidNS + 1, pid: 7, start: 7}
	init, _ := readProc("1")
	live := agentID{pidNS: m.self.pidNS, pid: 1, start: init.start}
	liveOther := agentID{pidNS: m.self.pidNS + 1, pid: 5, start: 5}
	for _, a := range []agentID{dead, deadOther, live, liveOther} {
		dir := filepath.Join(m.Dir(), a.name(1))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			writeCgroupFile(filepath.Join(dir, "cgroup.kill"), "1")
			waitEmpty(dir, time.Now().Add(5*time.Second))
			unix.Rmdir(dir)
		})
		// A process that is not the Reaper's child: it must be ended
		// through the cgroup alone.
		c := exec.Command("setsid", "sleep", "60")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if err := writeCgroupFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(c.Process.Pid)); err != nil {
			t.Fatal(err)
		}
	}
	// The live agent of another namespace holds its cgroup's lock.
	fd := lockFree(filepath.Join(m.Dir(), liveOther.name(1)))
	if fd < 0 {
		t.Fatal("cannot lock the cgroup of the live agent of another namespace")
	}
	defer unix.Close(fd)
	cgroups, procs := m.RemoveLeftovers()
	if cgroups != 2 || procs != 2 {
		t.Errorf("removed %d cgroups, ended %d processes; want 2, 2", cgroups, procs)
	}
	for _, a := range []agentID{dead, deadOther} {
		if _, err := os.Stat(filepath.Join(m.Dir(), a.name(1))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a dead agent's cgroup is still there: %v", err)
		}
	}
	for i, a := range []agentID{live, liveOther} {
		if !populated(filepath.Join(m.Dir(), a.name(1))) {
			t.Errorf("cgroup %d of a live agent was touched", i)
		}
	}
	if !strings.Contains(logs.String(), "processes=2") {
		t.Errorf("no log of the processes ended; log:\n%s", logs.String())
	}
	// The sleepers are reaped by the Reaper, which reaps every child; the
	// two left alone are killed by the cleanups above.
}

// TestCgroupLocked: every cgroup an agent makes is locked until it is
// removed, and a cgroup a sweep removed between its mkdir and its lock is
// made again under a new name.
func TestCgroupLocked(t *testing.T) {
	m, _ := openTestCgroups(t)
	c, err := m.New()
	if err != nil {
		t.Fatal(err)
	}
	if fd := lockFree(c.path); fd >= 0 {
		unix.Close(fd)
		t.Fatalf("the lock of a live cgroup %s was free", c.path)
	}
	c.Remove()
	// A sweep that takes the lock of the next cgroup right after its mkdir.
	var swept []string
	mkdirCgroup = func(path string, mode uint32) error {
		if err := unix.Mkdir(path, mode); err != nil || len(swept) > 0 {
			return err
		}
		swept = append(swept, path)
		fd := lockFree(path)
		if fd < 0 {
			t.Errorf("cannot lock the new cgroup %s", path)
		} else {
			t.Cleanup(func() { unix.Close(fd) })
		}
		return nil
	}
	defer func() { mkdirCgroup = unix.Mkdir }()
	c, err = m.New()
	if err != nil {
		t.Fatal(err)
	}
	if len(swept) != 1 || c.path == swept[0] {
		t.Errorf("New returned %s, the sweep held %v", c.path, swept)
	}
	if len(swept) == 1 {
		unix.Rmdir(swept[0]) // what the sweep would do
	}
	c.Remove()
}

// ignoringTerm counts the processes of pids that ignore SIGTERM (the
// SigIgn mask of /proc/PID/status).
func ignoringTerm(pids []int) int {
	n := 0
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if hex, ok := strings.CutPrefix(line, "SigIgn:\t"); ok {
				if mask, err := strconv.ParseUint(hex, 16, 64); err == nil && mask&(1<<(syscall.SIGTERM-1)) != 0 {
					n++
				}
			}
		}
	}
	return n
}
