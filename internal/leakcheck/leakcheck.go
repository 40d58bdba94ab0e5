//go:build linux

// Package leakcheck is for tests: it counts what a test may leave behind
// in its own process (descriptors, children and zombies, goroutines) and
// fails the test when something is left.
package leakcheck

import (
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/internal/watch"
)

var warmPoller sync.Once

// FDs counts this process's open descriptors. The runtime opens its
// poller's epoll descriptor and eventfd on the first pollable file; that is
// done here first, so that a count taken before a test's first pipe is
// comparable with one taken after (go test's -test.testlogfile used to do
// it by accident, so tests failed only when the binary was run directly).
// So is the agent's one inotify instance (package watch), with its reader
// goroutine, which a watch anywhere under test makes for the process's
// life.
func FDs(t testing.TB) int {
	t.Helper()
	warmPoller.Do(func() {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		r.Close()
		w.Close()
		require.NoError(t, watch.Start())
	})
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents) - 1
}

// Children lists this process's children, zombies included.
func Children(t testing.TB) []string {
	t.Helper()
	for {
		pids, ok := children(t)
		if ok {
			return pids
		}
	}
}

// children lists the children of every thread of this process; ok is
// false when a thread ended during the scan (its file went away, and its
// children went to another thread): the caller scans again.
func children(t testing.TB) (pids []string, ok bool) {
	files, err := filepath.Glob("/proc/self/task/*/children")
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return nil, false
		}
		require.NoError(t, err)
		pids = append(pids, strings.Fields(string(b))...)
	}
	return pids, true
}

// Check checks, when the test ends, that it left no child, descriptor or
// goroutine. Call it first: its check runs after every later cleanup.
// What lives as long as the process once started (os/signal's goroutine,
// the poller's descriptors) is started before counting; warm starts more
// of that kind.
func Check(t testing.TB, warm ...func()) {
	t.Helper()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGCHLD)
	signal.Stop(ch)
	for _, w := range warm {
		w()
	}
	fds, goroutines := FDs(t), runtime.NumGoroutine()
	t.Cleanup(func() {
		require.Empty(t, Children(t), "processes left behind (children or zombies)")
		require.Eventually(t, func() bool { return FDs(t) == fds }, 5*time.Second, 10*time.Millisecond,
			"descriptors left open")
		// Not require.Eventually: it runs its condition on a goroutine.
		for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > goroutines; {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines left running, %d before:\n%s", runtime.NumGoroutine(), goroutines, buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
