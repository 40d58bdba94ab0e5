package status

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	now := time.Now()
	write := func(s Status) {
		require.NoError(t, Write(path, s))
	}
	require.ErrorContains(t, Check(path, now), "no such file")

	write(Status{PID: os.Getpid(), State: "running", UpdatedAt: now})
	require.NoError(t, Check(path, now))
	write(Status{PID: os.Getpid(), State: "backoff", UpdatedAt: now})
	require.NoError(t, Check(path, now))

	write(Status{PID: os.Getpid(), State: "running", UpdatedAt: now.Add(-time.Minute)})
	require.ErrorContains(t, Check(path, now), "stale")
	write(Status{PID: 1 << 22, State: "running", UpdatedAt: now})
	require.ErrorContains(t, Check(path, now), "not running")
	write(Status{PID: os.Getpid(), State: "stopped", UpdatedAt: now})
	require.ErrorContains(t, Check(path, now), "stopped")
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o644))
	require.Error(t, Check(path, now))
}
