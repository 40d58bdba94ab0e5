//go:build linux

package test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/cgroup/cgrouptest"
	"github.com/fifobridge/fifobridge/internal/testgate"
)

// Containment: cgroup v2 (see "Containment" in the contract). These tests
// use the machine's real cgroup2 hierarchy, in a cgroup of their own below
// the test process's cgroup.

// ownCgroup returns the directory of this process's cgroup v2: the "0::"
// line of /proc/self/cgroup on the cgroup2 mount of /proc/self/mountinfo
// (one that shows the whole hierarchy).
func ownCgroup() (string, error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var path string
	for _, line := range strings.Split(string(cg), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if path == "" {
		return "", errors.New("no 0:: line in /proc/self/cgroup")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(mi), "\n") {
		f := strings.Fields(line)
		if i := indexOf(f, "-"); i > 0 && i+1 < len(f) && f[i+1] == "cgroup2" && f[3] == "/" {
			return filepath.Join(f[4], path), nil
		}
	}
	return "", errors.New("no cgroup2 mount")
}

func indexOf(f []string, s string) int {
	for i, x := range f {
		if x == s {
			return i
		}
	}
	return -1
}

// testCgroup makes a cgroup for one test's agents below this process's
// cgroup and checks at the end that the agents left nothing in it. Without
// a writable cgroup v2 the test is skipped (fails under
// FIFOBRIDGE_REQUIRE_PRIVILEGED=1).
func testCgroup(t *testing.T) string {
	t.Helper()
	dir, err := makeTestCgroup(t)
	if err != nil {
		testgate.Skip(t, "needs a writable cgroup v2: %v", err)
	}
	return dir
}

// makeTestCgroup is testCgroup for a test that also runs without one: the
// error says why there is none.
func makeTestCgroup(t *testing.T) (string, error) {
	own, err := ownCgroup()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(own, fmt.Sprintf("fbtest-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	t.Cleanup(func() { removeTestCgroup(t, dir) })
	return dir, nil
}

// removeTestCgroup removes a test's cgroup, killing and removing what an
// agent left in it (the test has failed then).
func removeTestCgroup(t *testing.T, dir string) {
	for _, sub := range subCgroups(dir) {
		path := filepath.Join(dir, sub)
		os.WriteFile(filepath.Join(path, "cgroup.kill"), []byte("1"), 0)
		eventually(5*time.Second, func() bool { return syscall.Rmdir(path) == nil })
	}
	if err := syscall.Rmdir(dir); err != nil {
		t.Errorf("remove test cgroup %s: %v", dir, err)
	}
}

// subCgroups lists the cgroups in dir.
func subCgroups(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// childCgroups lists the cgroups in dir but agents' anchors (the empty
// cgroup each agent holds locked for its life, see package cgroup): those
// of children.
func childCgroups(dir string) []string {
	return slices.DeleteFunc(subCgroups(dir), cgrouptest.IsAnchor)
}

// leftCgroups lists the cgroups in dir but the anchors of live agents
// (whose lock is held), of whatever PID namespace: what is left once
// every agent's children are gone, and, once the agents are too, every
// cgroup.
func leftCgroups(dir string) []string {
	return slices.DeleteFunc(subCgroups(dir), func(name string) bool {
		return cgrouptest.IsAnchor(name) && lockFree(filepath.Join(dir, name)) != nil
	})
}

// cgroupOf returns the cgroup v2 directory process pid is in.
func cgroupOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatalf("read cgroup of %d: %v", pid, err)
	}
	mount := cgroupRoot(t)
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(mount, p)
		}
	}
	t.Fatalf("process %d has no cgroup v2", pid)
	return ""
}

func ownPath(t *testing.T) string {
	b, _ := os.ReadFile("/proc/self/cgroup")
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			if p == "/" {
				return ""
			}
			return p
		}
	}
	t.Fatal("no own cgroup")
	return ""
}

// requireNoCgroups fails t unless dir holds no cgroup within timeout but
// the anchors of live agents (see leftCgroups).
func requireNoCgroups(t *testing.T, dir string, timeout time.Duration) {
	t.Helper()
	var left []string
	if !eventually(timeout, func() bool { left = leftCgroups(dir); return len(left) == 0 }) {
		t.Errorf("cgroups left in %s: %v", dir, left)
	}
}

// stormScript ignores TERM, starts 400 subtrees in sessions of their own
// (each a shell that keeps a sleeper), says "ready", and forks on.
const stormScript = `trap '' TERM
i=0
while [ $i -lt 400 ]; do
	setsid /bin/sh -c 'while :; do sleep 5; done' </dev/null &
	i=$((i+1))
done
echo ready
while :; do /bin/true; done`

// stormRuns is how many times TestCgroupForkStorm runs the storm.
func stormRuns() int { return soak("FIFOBRIDGE_STORM_RUNS", 1, 20) }

// TestCgroupForkStorm: a child that forks 400 subtrees in sessions of
// their own, ignores TERM and keeps forking is gone, with every process
// of it and its cgroup, within 3 s of TERM with -stop-timeout 1s.
func TestCgroupForkStorm(t *testing.T) {
	// Not parallel: a fork storm takes the machine's CPUs and pids, by design.
	dir := testCgroup(t)
	for run := range stormRuns() {
		t.Run(strconv.Itoa(run), func(t *testing.T) {
			checkLeaks(t, true)
			a := startAgent(t, agentConfig{program: binSh(stormScript), flags: []string{"-cgroup", dir, "-stop-timeout", "1s", "-restart", "never"}})
			r := openReader(t, a.out)
			// Forking 400 subtrees is not what is timed, and on a slow or
			// loaded machine it takes longer than a line usually may.
			if got := r.readLineWithin(time.Minute); got != "ready" {
				t.Fatalf("read line %q, want ready", got)
			}
			if st := a.waitStatus("containment", func(st status) bool { return st.Containment != "" }); st.Containment != "cgroup" {
				t.Errorf("status says containment %q, want cgroup", st.Containment)
			}
			a.signal(syscall.SIGTERM)
			deadline := time.Now().Add(3 * time.Second)
			m := marker(t)
			var left []procStat
			if !eventually(time.Until(deadline), func() bool { left = markedProcs(m); return len(left) == 0 }) {
				t.Fatalf("%d processes of the storm left 3 s after TERM:%s", len(left), describe(left[:min(len(left), 10)]))
			}
			requireNoCgroups(t, dir, max(time.Until(deadline), 0))
			if code := a.wait(hangTimeout); code != 0 && code != 137 {
				t.Errorf("agent exited %d", code)
			}
		})
		if t.Failed() {
			break
		}
	}
}

// TestCgroupJoinedProcess: a process the test starts itself and moves into
// the child's cgroup (as docker exec would join it) is ended by the
// child's stop, and the cgroup is removed.
func TestCgroupJoinedProcess(t *testing.T) {
	t.Parallel()
	dir := testCgroup(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{program: helperProgram(), helper: "sleep", flags: []string{"-cgroup", dir, "-stop-timeout", "1s"}})
	r := openReader(t, a.out)
	r.expectLine("ready")
	child := a.waitChild()
	cg := cgroupOf(t, child)
	if filepath.Dir(cg) != dir {
		t.Fatalf("child %d is in cgroup %s, not one below %s", child, cg, dir)
	}
	joined := exec.Command("sleep", "60")
	joined.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := joined.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- joined.Wait() }()
	defer func() {
		joined.Process.Kill()
		<-waited
	}()
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(joined.Process.Pid)), 0); err != nil {
		t.Fatalf("move %d into %s: %v", joined.Process.Pid, cg, err)
	}
	a.stop()
	select {
	case err := <-waited:
		waited <- err
	case <-time.After(hangTimeout):
		t.Fatalf("process %d joined to the child's cgroup survives the child's stop", joined.Process.Pid)
	}
	requireNoCgroups(t, dir, time.Second)
}
