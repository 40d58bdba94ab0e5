//go:build linux

package child

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"github.com/stretchr/testify/require"
)

// TestHasChildren: hasChildren says whether the process has a child, a
// zombie included, without reaping it. It runs in a helper process of its
// own, whose only children are the helper's.
func TestHasChildren(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(exe)
	c.Env = append(os.Environ(), "CHILD_TEST_HELPER=haschildren")
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "false\ntrue\ntrue\nfalse\n"; got != want {
		t.Fatalf("none, running, zombie, reaped: got %q, want %q", got, want)
	}
}

// TestChildrenOfTwoThreads: children reads the children files of two
// threads only, the leader's and the spawn thread's, and finds every
// child that the files of all the process's threads list: a running child
// the Reaper started, and the orphans another child left to the process
// (reparented to it, the child subreaper).
func TestChildrenOfTwoThreads(t *testing.T) {
	m := mark(t)
	left, err := testReaper.Start(helperSpec(t, m, "tree", "leave"))
	require.NoError(t, err)
	require.Equal(t, 0, waitStatus(t, left).Code())
	running, err := testReaper.Start(helperSpec(t, m, "sleep"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(marked(m)) == 4 }, 5*time.Second, 10*time.Millisecond,
		"the running child and the three sleepers the other one left")

	got, ok := testReaper.children()
	require.True(t, ok)
	require.ElementsMatch(t, everyThreadsChildren(t), got)
	require.Subset(t, got, marked(m), "the running child and the orphans")
	require.Greater(t, len(tasks(t)), 2, "the process has more threads than the two read")

	testReaper.Stop(running, syscall.SIGTERM, 200*time.Millisecond)
	testReaper.Stop(left, syscall.SIGTERM, 200*time.Millisecond)
	checkGone(t, m)
}

// tasks lists the threads of the test process.
func tasks(t *testing.T) []string {
	t.Helper()
	names, err := procfs.DirNames("/proc/self/task")
	require.NoError(t, err)
	return names
}

// everyThreadsChildren lists the children that the children files of all
// the test process's threads list.
func everyThreadsChildren(t *testing.T) []int {
	t.Helper()
	var pids []int
	for _, task := range tasks(t) {
		b, err := os.ReadFile("/proc/self/task/" + task + "/children")
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread is gone
		}
		require.NoError(t, err)
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			require.NoError(t, err)
			pids = append(pids, pid)
		}
	}
	return pids
}
