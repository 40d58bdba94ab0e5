//go:build linux

package cgroup

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
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
	"github.com/fifobridge/fifobridge/internal/procfs"
	"golang.org/x/sys/unix"
)

// openTest opens a Manager in a cgroup of the test's own; its log is
// returned.
func openTest(t *testing.T) (*Manager, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	m, err := Open(cgrouptest.Dir(t, Own), slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, logs
}

// TestCgroupRemoveBusy makes rmdir fail with EBUSY (the seam): the
// removal is retried, succeeds, and a warning names the cgroup.
func TestCgroupRemoveBusy(t *testing.T) {
	m, logs := openTest(t)
	failures := 3
	rmdirCgroup = func(path string) error {
		if failures > 0 {
			failures--
			return unix.EBUSY
		}
		return unix.Rmdir(path)
	}
	defer func() { rmdirCgroup = unix.Rmdir }()
	c, err := m.New()
	if err != nil {
		t.Fatal(err)
	}
	path := c.Path()
	c.Remove()
	if failures != 0 {
		t.Errorf("rmdir failed %d times less than asked", failures)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup %s not removed: %v", path, err)
	}
	if !strings.Contains(logs.String(), "cgroup busy") || !strings.Contains(logs.String(), path) {
		t.Errorf("no warning naming the cgroup; log:\n%s", logs.String())
	}
}

// testCgroupOf makes the cgroup name in m's directory, as another agent
// would, with a sleeper in it when sleeper is set: a process that is not
// the Reaper's child, to be ended through the cgroup alone. It is killed
// and removed at the end of the test if still there.
func testCgroupOf(t *testing.T, m *Manager, name string, sleeper bool) string {
	t.Helper()
	dir := filepath.Join(m.Dir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		writeCgroupFile(filepath.Join(dir, "cgroup.kill"), "1")
		waitEmpty(dir, time.Now().Add(5*time.Second))
		unix.Rmdir(dir)
	})
	if !sleeper {
		return dir
	}
	c := exec.Command("setsid", "sleep", "60")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	if err := writeCgroupFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(c.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// holdLock takes the lock of the cgroup at path for the rest of the test,
// as a live agent holds its anchor's.
func holdLock(t *testing.T, path string) {
	t.Helper()
	fd := lockFree(path)
	if fd < 0 {
		t.Fatalf("cannot lock %s", path)
	}
	t.Cleanup(func() { unix.Close(fd) })
}

// requireGone fails t unless the cgroups at paths are gone.
func requireGone(t *testing.T, what string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s %s is still there: %v", what, p, err)
		}
	}
}

// requireKept fails t unless the cgroups at paths are there, and hold a
// process if populated is set.
func requireKept(t *testing.T, what string, populatedToo bool, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s %s was removed: %v", what, p, err)
		} else if populatedToo && !populated(p) {
			t.Errorf("%s %s was emptied", what, p)
		}
	}
}

// TestCgroupLeftovers: a sweep ends and removes the cgroups of agents
// that are gone, of this PID namespace or another, and leaves a live
// agent's alone. An agent with an anchor is gone when its anchor's lock
// is free: its children's cgroups and then its anchors (every try's) are
// removed; a live agent's anchor is locked (the second try's here, with a
// first try's left free, which the sweep takes first) and its children's
// cgroups, which hold no lock, are left alone. An agent without an anchor
// (an older version, or one whose anchor is gone) is judged per cgroup:
// gone when the cgroup's lock is free, unless its name says it is a live
// process of this namespace. The sweeping agent's own cgroups are never
// touched.
func TestCgroupLeftovers(t *testing.T) {
	m, logs := openTest(t)
	// Anchored agents, of other namespaces: one SIGKILLed, one live.
	dead := agentID{pidNS: m.self.pidNS + 1, pid: 9, start: 9}
	live := agentID{pidNS: m.self.pidNS + 1, pid: 8, start: 8}
	deadAnchors := []string{testCgroupOf(t, m, dead.anchorName(0), false), testCgroupOf(t, m, dead.anchorName(6), false)}
	deadChildren := []string{testCgroupOf(t, m, dead.name(1), true), testCgroupOf(t, m, dead.name(2), false)}
	liveFree := testCgroupOf(t, m, live.anchorName(0), false) // a try a sweep took
	liveAnchor := testCgroupOf(t, m, live.anchorName(1), false)
	holdLock(t, liveAnchor)
	liveChildren := []string{testCgroupOf(t, m, live.name(1), true), testCgroupOf(t, m, live.name(2), true)}
	// Agents without an anchor.
	oldDead := agentID{pidNS: m.self.pidNS, pid: m.self.pid, start: m.self.start + 1}
	oldDeadOther := agentID{pidNS: m.self.pidNS + 1, pid: 7, start: 7}
	init, _ := procfs.Stat("1")
	oldLive := agentID{pidNS: m.self.pidNS, pid: 1, start: init.Start}
	oldLiveOther := agentID{pidNS: m.self.pidNS + 1, pid: 5, start: 5}
	oldGone := []string{testCgroupOf(t, m, oldDead.name(1), true), testCgroupOf(t, m, oldDeadOther.name(1), true)}
	oldKept := []string{testCgroupOf(t, m, oldLive.name(1), true), testCgroupOf(t, m, oldLiveOther.name(1), true)}
	holdLock(t, oldKept[1]) // an older agent of another namespace locks each cgroup
	// The sweeping agent's own child's cgroup, with a process in it.
	own, err := m.New()
	if err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "60")
	sleeper.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: own.Dirfd()}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	own.CloseDirfd()
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })

	cgroups, procs := m.RemoveLeftovers()
	if cgroups != 6 || procs != 3 {
		t.Errorf("removed %d cgroups, ended %d processes; want 6, 3", cgroups, procs)
	}
	requireGone(t, "the dead agent's cgroup", append(deadAnchors, deadChildren...)...)
	requireGone(t, "the dead older agent's cgroup", oldGone...)
	requireKept(t, "the live agent's child's cgroup", true, liveChildren...)
	requireKept(t, "the live agent's anchor", false, liveAnchor, liveFree)
	requireKept(t, "the live older agent's cgroup", true, oldKept...)
	requireKept(t, "the sweeping agent's own cgroup", true, own.Path())
	requireKept(t, "the sweeping agent's anchor", false, m.anchor)
	if !strings.Contains(logs.String(), "processes=3") {
		t.Errorf("no log of the processes ended; log:\n%s", logs.String())
	}
	// The sleepers killed with their cgroups are reaped here; those left
	// alone are killed by the cleanups above and reaped after them.
}

// TestCgroupAnchor: an agent holds one locked cgroup, its anchor, and one
// descriptor for it, whatever number of children it runs; a child's
// cgroup holds no lock and, once the child is in it, no descriptor.
// Close removes the children's cgroups and then the anchor.
func TestCgroupAnchor(t *testing.T) {
	dir := cgrouptest.Dir(t, Own)
	before := procfs.Descriptors()
	m, err := Open(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if got := cgrouptest.Below(t, dir); !slices.Equal(got, []string{m.self.anchorName(0)}) {
		t.Errorf("Open made %v, want the anchor %s alone", got, m.self.anchorName(0))
	}
	if fd := lockFree(m.anchor); fd >= 0 {
		unix.Close(fd)
		t.Errorf("the anchor %s of a live agent is not locked", m.anchor)
	}
	if n := procfs.Descriptors() - before; n != 1 {
		t.Errorf("an open Manager holds %d descriptors, want 1 (its anchor)", n)
	}
	var groups []*Group
	for range 3 {
		c, err := m.New()
		if err != nil {
			t.Fatal(err)
		}
		c.CloseDirfd()
		c.CloseDirfd() // once
		groups = append(groups, c)
		if fd := lockFree(c.Path()); fd < 0 {
			t.Errorf("a child's cgroup %s is locked", c.Path())
		} else {
			unix.Close(fd)
		}
	}
	if n := procfs.Descriptors() - before; n != 1 {
		t.Errorf("a Manager with 3 children's cgroups holds %d descriptors, want 1 (its anchor)", n)
	}
	groups[0].Remove()
	m.Close()
	if left := cgrouptest.Below(t, dir); len(left) != 0 {
		t.Errorf("Close left %v", left)
	}
	if n := procfs.Descriptors() - before; n != 0 {
		t.Errorf("a closed Manager holds %d descriptors", n)
	}
}

// TestCgroupAnchorSwept: an anchor a sweep takes between its mkdir and its
// lock (it holds the lock, or has removed the anchor already) is made
// again under the next try's name, and the one taken does not stay.
func TestCgroupAnchorSwept(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sweep func(t *testing.T, m *Manager, path string)
	}{
		{"lock held", func(t *testing.T, _ *Manager, path string) { holdLock(t, path) }},
		{"removed", func(t *testing.T, sweeper *Manager, path string) {
			if n, _ := sweeper.RemoveLeftovers(); n != 1 {
				t.Errorf("the sweep removed %d cgroups, want the new anchor", n)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := cgrouptest.Dir(t, Own)
			discard := slog.New(slog.NewTextHandler(io.Discard, nil))
			// Another agent's sweep, of another PID namespace: it cannot
			// tell whether the agent runs.
			self, err := selfID()
			if err != nil {
				t.Fatal(err)
			}
			sweeper := &Manager{dir: dir, log: discard, self: agentID{pidNS: self.pidNS + 1, pid: 3, start: 3}, foreignProc: true}
			var swept []string
			mkdirCgroup = func(path string, mode uint32) error {
				if err := unix.Mkdir(path, mode); err != nil || len(swept) > 0 {
					return err
				}
				swept = append(swept, path)
				tc.sweep(t, sweeper, path)
				return nil
			}
			defer func() { mkdirCgroup = unix.Mkdir }()
			m, err := Open(dir, discard)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, self.anchorName(1)); m.anchor != want || len(swept) != 1 {
				t.Errorf("the anchor is %s, want %s, after a sweep took %v", m.anchor, want, swept)
			}
			if got := cgrouptest.Below(t, dir); !slices.Equal(got, []string{self.anchorName(1)}) {
				t.Errorf("cgroups %v, want the second anchor alone", got)
			}
			if fd := lockFree(m.anchor); fd >= 0 {
				unix.Close(fd)
				t.Errorf("the anchor %s is not locked", m.anchor)
			}
			m.Close()
			if left := cgrouptest.Below(t, dir); len(left) != 0 {
				t.Errorf("Close left %v", left)
			}
		})
	}
}
