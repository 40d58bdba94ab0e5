//go:build linux

package status

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/stretchr/testify/require"
)

// writeFile writes the status file at path with mode 0644.
func writeFile(t *testing.T, path string, s Status) {
	t.Helper()
	d, err := sharedir.Open(filepath.Dir(path), false)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, WriteAt(d, filepath.Base(path), s, 0o644))
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	now := time.Now()
	write := func(s Status) {
		writeFile(t, path, s)
	}
	require.ErrorContains(t, Check(dir, path, "", now), "no such file")

	// No lock holder: gone, whatever the pid says.
	write(Status{PID: os.Getpid(), State: "running", UpdatedAt: now})
	require.ErrorContains(t, Check(dir, path, "", now), "gone")

	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	lock, err := Lock(d, 0o644)
	require.NoError(t, err)
	require.NoError(t, Check(dir, path, "", now))
	write(Status{PID: 1 << 22, State: "backoff", UpdatedAt: now})
	require.NoError(t, Check(dir, path, "", now), "a pid of another namespace does not matter")

	write(Status{PID: os.Getpid(), State: "running", UpdatedAt: now.Add(-time.Minute)})
	require.ErrorContains(t, Check(dir, path, "", now), "stale")
	write(Status{PID: os.Getpid(), State: "stopped", UpdatedAt: now})
	require.ErrorContains(t, Check(dir, path, "", now), "stopped")
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o644))
	require.Error(t, Check(dir, path, "", now))

	write(Status{PID: os.Getpid(), State: "running", UpdatedAt: now})
	require.NoError(t, lock.Close())
	require.ErrorContains(t, Check(dir, path, "", now), "gone")
}

// TestCheckCrashLoop: health goes by the agent's verdict, crash_loop,
// running or in backoff, and the reason says so; restarts inside
// -restart-window, however many, no longer decide.
func TestCheckCrashLoop(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	lock, err := Lock(d, 0o644)
	require.NoError(t, err)
	defer lock.Close()
	now := time.Now()
	for _, state := range []string{"running", "backoff"} {
		for _, loop := range []bool{false, true} {
			s := Status{State: state, UpdatedAt: now}
			s.Child.Restarts, s.Child.RecentRestarts, s.Child.RestartWindow = 12, 9, "1m0s"
			s.Child.QuickExits, s.Child.CrashLoop = 4, loop
			writeFile(t, path, s)
			err := Check(dir, path, "", now)
			if !loop {
				require.NoError(t, err, "%s, not in a crash loop, with 9 restarts in the window", state)
				continue
			}
			require.EqualError(t, err, "crash loop: 4 runs in a row ended within -restart-window (1m0s)", state)
		}
	}
}

// TestCheckSession: health -session is 0 only for a session the file
// lists whose child is not in a crash loop, of a healthy agent in
// sessions mode; the reason names the session.
func TestCheckSession(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	now := time.Now()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	lock, err := Lock(d, 0o644)
	require.NoError(t, err)
	defer lock.Close()
	sessions := []Session{
		{Name: "sh1", State: "running"},
		{Name: "bad", State: "backoff", Child: ChildStatus{CrashLoop: true, QuickExits: 3, RestartWindow: "1m0s"}},
	}
	writeFile(t, path, Status{Mode: ModeSessions, State: "running", UpdatedAt: now, Sessions: sessions})
	require.NoError(t, Check(dir, path, "sh1", now))
	require.ErrorContains(t, Check(dir, path, "bad", now), "session bad: crash loop: 3 runs in a row")
	require.EqualError(t, Check(dir, path, "none", now), "session none is not open")
	require.NoError(t, Check(dir, path, "", now), "a session's crash loop is not the agent's")

	writeFile(t, path, Status{Mode: ModeSessions, State: "stopping", UpdatedAt: now, Sessions: sessions})
	require.ErrorContains(t, Check(dir, path, "sh1", now), `agent state is "stopping"`)
	writeFile(t, path, Status{Mode: "stream", State: "running", UpdatedAt: now})
	require.ErrorContains(t, Check(dir, path, "sh1", now), "the agent is in stream mode: it has no sessions")
}
