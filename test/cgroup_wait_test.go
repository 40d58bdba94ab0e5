//go:build linux

package test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Issue 32 (after item 2): a stop waits for the child's cgroup to empty
// with one watch of its cgroup.events (one inotify instance) for the whole
// stop, not a new one every 100 ms. The child ignores TERM, so the stop
// waits -stop-timeout; the watch the agent holds when the stop begins and
// the one it holds when it warns that the child ignores TERM (2 s later)
// must be the same open file (kcmp), taken from the agent with
// pidfd_getfd. The copies hold the instances open, and watched, until the
// test ends: that keeps nothing from the agent's stop.
func TestCgroupStopOneWatch(t *testing.T) {
	t.Parallel()
	requirePrivileged(t, "pidfd_getfd and kcmp on the agent need root")
	cg := testCgroup(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{program: helperProgram(), helper: "ignoreterm",
		flags: []string{"-cgroup", cg, "-stop-timeout", "4s"}})
	openReader(t, a.out).expectLine("ready")
	kids := childrenOf(a.pid)
	if len(kids) != 1 {
		t.Fatalf("the agent has children %v, want its one child", kids)
	}
	events, err := os.Stat(filepath.Join(cgroupOf(t, kids[0].pid), "cgroup.events"))
	if err != nil {
		t.Fatal(err)
	}
	ino := events.Sys().(*syscall.Stat_t).Ino
	pidfd, err := unix.PidfdOpen(a.pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open of the agent: %v", err)
	}
	defer unix.Close(pidfd)

	a.signal(syscall.SIGTERM)
	first := watchOf(t, a, pidfd, ino)
	defer unix.Close(first)
	a.waitLog("ignores its stop signal")
	later := watchOf(t, a, pidfd, ino)
	defer unix.Close(later)
	same, err := sameFile(first, later)
	if err != nil {
		t.Fatalf("kcmp: %v", err)
	}
	if !same {
		t.Errorf("the stop watches cgroup.events with a new inotify instance after 2 s; want one for the whole stop")
	}
	if code := a.wait(hangTimeout); code != 128+int(syscall.SIGKILL) {
		t.Errorf("agent exited %d, want %d: its child killed at -stop-timeout", code, 128+int(syscall.SIGKILL))
	}
	requireNoCgroups(t, cg, hangTimeout)
}

// watchOf waits until the agent has an inotify descriptor that watches
// inode ino, and returns a copy of it (pidfd_getfd), which holds the
// inotify instance open.
func watchOf(t *testing.T, a *agent, pidfd int, ino uint64) int {
	t.Helper()
	fd := -1
	if !eventually(hangTimeout, func() bool {
		n, ok := inotifyWatching(a.pid, ino)
		if !ok {
			return false
		}
		fd, _ = unix.PidfdGetfd(pidfd, n, 0)
		return fd >= 0
	}) {
		t.Fatalf("the agent %d has no inotify watch of inode %d; descriptors:\n%s", a.pid, ino, fdTargets(strconv.Itoa(a.pid)))
	}
	return fd
}

// inotifyWatching returns a descriptor of pid that is an inotify instance
// with a watch of inode ino, as /proc/PID/fdinfo says ("inotify wd:1
// ino:HEX ...").
func inotifyWatching(pid int, ino uint64) (int, bool) {
	dir := fmt.Sprintf("/proc/%d/fdinfo", pid)
	ents, _ := os.ReadDir(dir)
	want := fmt.Sprintf("ino:%x", ino)
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fields := strings.Fields(sc.Text()); len(fields) > 2 && fields[0] == "inotify" && fields[2] == want {
				f.Close()
				n, _ := strconv.Atoi(e.Name())
				return n, true
			}
		}
		f.Close()
	}
	return 0, false
}

// sameFile reports whether two descriptors of this process are the same
// open file (kcmp KCMP_FILE).
func sameFile(a, b int) (bool, error) {
	const kcmpFile = 0
	pid := uintptr(os.Getpid())
	r, _, errno := unix.Syscall6(unix.SYS_KCMP, pid, pid, kcmpFile, uintptr(a), uintptr(b), 0)
	if errno != 0 {
		return false, errno
	}
	return r == 0, nil
}
