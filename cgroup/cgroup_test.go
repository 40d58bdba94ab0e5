//go:build linux

package cgroup

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// TestCgroupLeftovers ends the processes in the cgroups of agents that are
// gone, of this PID namespace or another: their locks are free. It leaves
// alone the cgroup of a live agent of another namespace (its lock is held)
// and one without a lock named by a live process of this namespace.
func TestCgroupLeftovers(t *testing.T) {
	m, logs := openTest(t)
	dead := agentID{pidNS: m.self.pidNS, pid: m.self.pid, start: m.self.start + 1}
	deadOther := agentID{pidNS: m.self.pidNS + 1, pid: 7, start: 7}
	init, _ := procfs.Stat("1")
	live := agentID{pidNS: m.self.pidNS, pid: 1, start: init.Start}
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
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
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
	// The sleepers killed with their cgroup are reaped here; the two left
	// alone are killed by the cleanups above and reaped after them.
}

// TestCgroupLocked: every cgroup an agent makes is locked until it is
// removed, and a cgroup a sweep removed between its mkdir and its lock is
// made again under a new name.
func TestCgroupLocked(t *testing.T) {
	m, _ := openTest(t)
	c, err := m.New()
	if err != nil {
		t.Fatal(err)
	}
	if fd := lockFree(c.Path()); fd >= 0 {
		unix.Close(fd)
		t.Fatalf("the lock of a live cgroup %s was free", c.Path())
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
	if len(swept) != 1 || c.Path() == swept[0] {
		t.Errorf("New returned %s, the sweep held %v", c.Path(), swept)
	}
	if len(swept) == 1 {
		unix.Rmdir(swept[0]) // what the sweep would do
	}
	c.Remove()
}
