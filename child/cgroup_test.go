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

// TestCgroupLeftovers ends the processes in a cgroup named by an agent
// that is gone, and leaves alone one named by a live process.
func TestCgroupLeftovers(t *testing.T) {
	m, logs := openTestCgroups(t)
	dead := agentID{pidNS: m.self.pidNS, pid: m.self.pid, start: m.self.start + 1}
	init, _ := readProc("1")
	live := agentID{pidNS: m.self.pidNS, pid: 1, start: init.start}
	other := agentID{pidNS: m.self.pidNS + 1, pid: 5, start: 5}
	for _, a := range []agentID{dead, live, other} {
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
	cgroups, procs := m.RemoveLeftovers()
	if cgroups != 1 || procs != 1 {
		t.Errorf("removed %d cgroups, ended %d processes; want 1, 1", cgroups, procs)
	}
	if _, err := os.Stat(filepath.Join(m.Dir(), dead.name(1))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dead agent's cgroup is still there: %v", err)
	}
	for i, a := range []agentID{live, other} {
		if !populated(filepath.Join(m.Dir(), a.name(1))) {
			t.Errorf("cgroup %d of a live or unknown agent was touched", i)
		}
	}
	if !strings.Contains(logs.String(), "processes=1") {
		t.Errorf("no log of the processes ended; log:\n%s", logs.String())
	}
	// The sleepers are reaped by the Reaper, which reaps every child; the
	// two left alone are killed by the cleanups above.
}

// TestCgroupCloneRefused: when the kernel refuses to start a child in its
// cgroup (EBUSY, as cgroup v2's no-internal-processes rule makes it), the
// cgroup is removed and the child runs without one, after a warning.
func TestCgroupCloneRefused(t *testing.T) {
	m, logs := openTestCgroups(t)
	forkExec = func(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
		if attr.Sys.UseCgroupFD {
			return 0, unix.EBUSY
		}
		return syscall.ForkExec(path, argv, attr)
	}
	defer func() { forkExec = syscall.ForkExec }()
	spec := helperSpec(t, "cgrefused", "sleep")
	spec.Cgroups = m
	p, err := testReaper.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	if p.cg != nil {
		t.Error("child has a cgroup the kernel refused")
	}
	if left := cgroupsIn(t, m.Dir()); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
	if !strings.Contains(logs.String(), "runs without one") {
		t.Errorf("no warning; log:\n%s", logs.String())
	}
	testReaper.Stop(p, syscall.SIGTERM, time.Second)
	checkGone(t, "cgrefused")
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
