//go:build linux

package cgroup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/procfs"
	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/require"
)

// inotifyFDs counts this process's inotify descriptors.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
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
// cgroup.events, made by the first wait that finds the cgroup populated
// and kept until Close; the emptying wakes a wait; Close leaves no
// descriptor or goroutine.
func TestEmptyWatch(t *testing.T) {
	leakcheck.Check(t, procfs.Reserve) // cgroupfs is read through the reserve
	m, _ := openTest(t)
	c, kill := populatedGroup(t, m)
	w := c.WatchEmpty()
	require.Zero(t, inotifyFDs(t), "a watch made before any wait")
	for range 3 {
		require.False(t, w.Wait(time.Now().Add(20*time.Millisecond)), "empty while its process runs")
		require.Equal(t, 1, inotifyFDs(t), "inotify descriptors after a wait: want the one watch, kept")
	}
	kill()
	require.True(t, w.Wait(time.Now().Add(time.Minute)), "not empty after its process ended")
	w.Close()
	require.Zero(t, inotifyFDs(t), "inotify descriptors after Close")
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
	require.Zero(t, inotifyFDs(t), "a watch made for an empty cgroup")
	c.Remove()
}

// TestEmptyWatchNoWatcher: when no watcher can be made (no inotify
// instance or descriptor left), the waits read cgroup.events instead, and
// still see the cgroup empty.
func TestEmptyWatchNoWatcher(t *testing.T) {
	leakcheck.Check(t, procfs.Reserve) // cgroupfs is read through the reserve
	newWatcher = func() (*fsnotify.Watcher, error) { return nil, errors.New("too many open files") }
	defer func() { newWatcher = fsnotify.NewWatcher }()
	m, _ := openTest(t)
	c, kill := populatedGroup(t, m)
	w := c.WatchEmpty()
	defer w.Close()
	require.False(t, w.Wait(time.Now().Add(20*time.Millisecond)), "empty while its process runs")
	kill()
	require.True(t, w.Wait(time.Now().Add(time.Minute)), "not empty after its process ended")
	require.Zero(t, inotifyFDs(t), "inotify descriptors without a watcher")
	c.Remove()
}
