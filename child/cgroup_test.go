//go:build linux

package child

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/cgroup/cgrouptest"
	"github.com/fifobridge/fifobridge/internal/testlog"
)

func openTestCgroups(t *testing.T) (*cgroup.Manager, *testlog.Buffer) {
	t.Helper()
	logs := &testlog.Buffer{}
	m, err := cgroup.Open(cgrouptest.Dir(t, cgroup.Own), slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, logs
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
	if cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p.Pid)); !strings.Contains(string(cg), p.cg.Path()[len(m.Dir()):]) {
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
	if left := cgrouptest.Children(t, m.Dir()); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
	m.Close()
	if left := cgrouptest.Below(t, m.Dir()); len(left) > 0 {
		t.Errorf("cgroups left after Close: %v", left)
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
	if left := cgrouptest.Children(t, m.Dir()); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
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
