//go:build linux

package cgroup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/procfs"
	"github.com/fifobridge/fifobridge/internal/watch"
	"github.com/stretchr/testify/require"
)

// inotifyWatches counts the watches of this process's inotify
// descriptors (their fdinfo lists one "inotify wd:" line each), and the
// descriptors.
func inotifyWatches(t *testing.T) (watches, fds int) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err != nil || l != "anon_inode:inotify" {
			continue
		}
		fds++
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", e.Name()))
		require.NoError(t, err)
		watches += strings.Count(string(info), "inotify wd:")
	}
	return watches, fds
}

// requireWatches fails the test unless this process has want inotify
// watches, all of the one instance (package watch).
func requireWatches(t *testing.T, want int, msg string) {
	t.Helper()
	watches, fds := inotifyWatches(t)
	require.Equal(t, 1, fds, "inotify descriptors: want the agent's one instance")
	require.Equal(t, want, watches, msg)
}

// populatedGroup makes a cgroup with a sleep in it; kill ends the sleep
// and reaps it.
func populatedGroup(t *testing.T, m *Manager) (c *Group, kill func()) {
	t.Helper()
	c, err := m.New()
	require.NoError(t, err)
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	done := false
	kill = func() {
		if !done {
			done = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(kill)
	require.NoError(t, writeCgroupFile(filepath.Join(c.Path(), "cgroup.procs"), strconv.Itoa(cmd.Process.Pid)))
	return c, kill
}

// TestEmptyWatch: the waits of one EmptyWatch share one watch of
// cgroup.events in the agent's one inotify instance, made by the first
// wait that finds the cgroup populated and kept until Close; the emptying
// wakes a wait; Close leaves no watch, descriptor or goroutine.
func TestEmptyWatch(t *testing.T) {
	leakcheck.Check(t, procfs.Reserve) // cgroupfs is read through the reserve
	m, _ := openTest(t)
	c, kill := populatedGroup(t, m)
	w := c.WatchEmpty()
	requireWatches(t, 0, "a watch made before any wait")
	for range 3 {
		require.False(t, w.Wait(time.Now().Add(20*time.Millisecond)), "empty while its process runs")
		requireWatches(t, 1, "watches after a wait: want the one watch, kept")
	}
	kill()
	require.True(t, w.Wait(time.Now().Add(time.Minute)), "not empty after its process ended")
	w.Close()
	requireWatches(t, 0, "watches after Close")
	c.Remove()
}

// TestEmptyWatchEmpty: a wait on an empty cgroup makes no watch.
func TestEmptyWatchEmpty(t *testing.T) {
	leakcheck.Check(t, procfs.Reserve) // cgroupfs is read through the reserve
	m, _ := openTest(t)
	c, err := m.New()
	require.NoError(t, err)
	w := c.WatchEmpty()
	defer w.Close()
	require.True(t, w.Wait(time.Now()), "an empty cgroup not empty")
	requireWatches(t, 0, "a watch made for an empty cgroup")
	c.Remove()
}

// TestEmptyWatchNoWatcher: when no watch can be made (no inotify
// instance or watch to be had), the waits read cgroup.events instead, and
// still see the cgroup empty.
func TestEmptyWatchNoWatcher(t *testing.T) {
	leakcheck.Check(t, procfs.Reserve) // cgroupfs is read through the reserve
	addWatch = func(string, uint32, func(watch.Event)) (*watch.Watch, error) {
		return nil, errors.New("too many open files")
	}
	defer func() { addWatch = watch.Add }()
	m, _ := openTest(t)
	c, kill := populatedGroup(t, m)
	w := c.WatchEmpty()
	defer w.Close()
	require.False(t, w.Wait(time.Now().Add(20*time.Millisecond)), "empty while its process runs")
	kill()
	require.True(t, w.Wait(time.Now().Add(time.Minute)), "not empty after its process ended")
	requireWatches(t, 0, "watches without a watcher")
	c.Remove()
}

// TestEmptyWatchWakeOn: a wait reads cgroup.events again when the channel
// given to WakeOn closes, without its notification: here the watch is of
// another file, which never changes, and the recheck an hour away, so
// only the wake can end the wait before its deadline, 20 s away (a wait
// that sleeps to its deadline sees the cgroup empty there too: the test
// asks for half of it, a bound no machine comes near). The process is
// killed once the wait made its watch, which it does just before it
// reads the file again and sleeps.
func TestEmptyWatchWakeOn(t *testing.T) {
	leakcheck.Check(t, procfs.Reserve) // cgroupfs is read through the reserve
	quiet := filepath.Join(t.TempDir(), "quiet")
	require.NoError(t, os.WriteFile(quiet, nil, 0o600))
	watching := make(chan struct{})
	addWatch = func(_ string, mask uint32, f func(watch.Event)) (*watch.Watch, error) {
		defer close(watching)
		return watch.Add(quiet, mask, f)
	}
	recheck := emptyRecheck
	emptyRecheck = time.Hour
	defer func() { addWatch, emptyRecheck = watch.Add, recheck }()
	m, _ := openTest(t)
	c, kill := populatedGroup(t, m)
	w := c.WatchEmpty()
	defer w.Close()
	reaped := make(chan struct{})
	w.WakeOn(reaped)
	deadline := time.Now().Add(20 * time.Second)
	waited := make(chan bool)
	go func() { waited <- w.Wait(deadline) }()
	<-watching
	kill()
	close(reaped)
	require.True(t, <-waited, "the wait did not see the cgroup empty")
	require.Less(t, time.Now(), deadline.Add(-10*time.Second), "the wait slept past the wake")
	c.Remove()
}
