//go:build linux

package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// health runs "fifobridge health ARGS..." and returns its exit code and
// stderr.
func health(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	return runAgent(t, env, append([]string{"health"}, args...)...)
}

// requireHealth fails t unless health exits with want; unhealthy must come
// with a reason on stderr.
func requireHealth(t *testing.T, want int, env []string, args ...string) {
	t.Helper()
	code, stderr := health(t, env, args...)
	if code != want {
		t.Fatalf("fifobridge health %q exited with %d, want %d; stderr:\n%s", args, code, want, stderr)
	}
	if want != 0 && strings.TrimSpace(stderr) == "" {
		t.Fatalf("fifobridge health %q exited with %d and no reason on stderr", args, code)
	}
}

// writeStatusFile writes a status file as the agent would.
func writeStatusFile(t *testing.T, path string, pid int, state string, updated time.Time) {
	t.Helper()
	dir := filepath.Dir(path)
	st := map[string]any{
		"pid": pid, "mode": "exec", "state": state,
		"started_at": updated.Add(-time.Hour).UTC().Format(time.RFC3339),
		"updated_at": updated.UTC().Format(time.RFC3339),
		"in":         filepath.Join(dir, "in"), "out": filepath.Join(dir, "out"), "fds": 7,
		"child":    map[string]any{"pid": 0, "starts": 0, "restarts": 0, "last_exit": nil},
		"requests": map[string]any{"accepted": 0, "rejected": 0, "active": 0, "completed": 0},
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Fatalf("pid %d of an exited process: kill 0 gave %v", pid, err)
	}
	return pid
}

// TestHealthStatusFile checks health against status files written by hand.
func TestHealthStatusFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		pid   func(t *testing.T) int
		state string
		age   time.Duration // of the status file when it is written
		want  int
	}{
		{"fresh, alive, running", selfPID, "running", 0, 0},
		{"fresh, alive, backoff", selfPID, "backoff", 0, 0},
		{"stale by a minute", selfPID, "running", time.Minute, 1},
		{"stale by 20s", selfPID, "running", 20 * time.Second, 1},
		{"dead pid", deadPID, "running", 0, 0}, // the lock tells, not the pid
		{"lock free", nil, "running", 0, 1},
		{"state starting", selfPID, "starting", 0, 1},
		{"state stopping", selfPID, "stopping", 0, 1},
		{"state stopped", selfPID, "stopped", 0, 1},
		{"state unknown", selfPID, "dancing", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			dir := t.TempDir()
			pid := os.Getpid()
			if tc.pid != nil {
				pid = tc.pid(t)
				holdLock(t, dir) // an agent holds DIR/lock
			}
			writeStatusFile(t, filepath.Join(dir, "status.json"), pid, tc.state, time.Now().Add(-tc.age))
			requireHealth(t, tc.want, nil, "-dir", dir)
		})
	}

	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		requireHealth(t, 1, nil, "-dir", t.TempDir())
		requireHealth(t, 1, nil, "-dir", filepath.Join(t.TempDir(), "no", "such", "dir"))
	})

	t.Run("not JSON", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "status.json"), []byte(`{"pid":`), 0o644); err != nil {
			t.Fatal(err)
		}
		requireHealth(t, 1, nil, "-dir", dir)
	})

	t.Run("FIFOBRIDGE_DIR", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		good, bad := t.TempDir(), t.TempDir()
		holdLock(t, good)
		writeStatusFile(t, filepath.Join(good, "status.json"), os.Getpid(), "running", time.Now())
		requireHealth(t, 0, []string{"FIFOBRIDGE_DIR=" + good})
		requireHealth(t, 1, []string{"FIFOBRIDGE_DIR=" + bad})
		requireHealth(t, 0, []string{"FIFOBRIDGE_DIR=" + bad}, "-dir", good) // the flag wins
	})
}

func selfPID(*testing.T) int { return os.Getpid() }

// holdLock takes the agent's lock on dir/lock, as an agent would, until t
// ends.
func holdLock(t *testing.T, dir string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("lock %s: %v", f.Name(), err)
	}
}

// TestHealthAgent checks health against real agents, in both modes, while
// they run and after they stopped.
func TestHealthAgent(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	for _, mode := range []string{"stream", "exec"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{flags: []string{"-mode", mode}, program: []string{busybox, "cat"}})
			openWriter(t, a.in).close()
			st := a.waitExecStatus("running", func(st status) bool { return st.State == "running" })
			if st.PID != a.pid || st.Mode != mode {
				t.Fatalf("status %+v, want pid %d mode %s", st, a.pid, mode)
			}
			requireHealth(t, 0, nil, "-dir", a.dir)

			// The file is rewritten at least every 5 s while idle (busySlack
			// on top: a busy machine may run the agent's ticker late).
			first := st.UpdatedAt
			if !eventually(5*time.Second+busySlack, func() bool {
				st, err := a.readStatus()
				return err == nil && st.UpdatedAt.After(first)
			}) {
				t.Fatalf("status not rewritten within %v of updated_at %v", 5*time.Second+busySlack, first)
			}
			requireHealth(t, 0, nil, "-dir", a.dir)

			// Stream mode exits with cat's status (143), exec mode 0.
			if code := a.stop(); mode == "exec" && code != 0 {
				t.Fatalf("agent exited with %d, want 0", code)
			}
			if st, err := a.readStatus(); err != nil || st.State != "stopped" {
				t.Fatalf("status after stop: %+v, %v; want state stopped", st, err)
			}
			requireHealth(t, 1, nil, "-dir", a.dir)
		})
	}
}
