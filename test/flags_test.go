//go:build linux

package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFlagPaths: -in, -out, -status and -perm put the FIFOs and the status
// file where they say, with that mode, and the FIFOs the agent made go
// with it.
func TestFlagPaths(t *testing.T) {
	// Not parallel: it sets the umask of the whole process, which the others'
	// agents would inherit.
	requireBusybox(t)
	checkLeaks(t, true)
	base := t.TempDir()
	in, out := filepath.Join(base, "a", "input"), filepath.Join(base, "b", "output")
	statusPath := filepath.Join(base, "c", "state.json")
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	a := startAgent(t, agentConfig{
		flags:   []string{"-in", in, "-out", out, "-status", statusPath, "-perm", "0600"},
		program: sh(t, "exec cat"),
	})
	r := openReader(t, out)
	roundTrip(t, in, r, "custom paths")
	for _, p := range []string{in, out} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != os.ModeNamedPipe|0o600 {
			t.Errorf("%s has mode %v, want a FIFO with 0600", p, fi.Mode())
		}
	}
	for _, p := range []string{a.in, a.out, a.status} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists although -in, -out and -status point elsewhere", p)
		}
	}
	var b []byte
	var err error
	if !eventually(hangTimeout, func() bool { b, err = os.ReadFile(statusPath); return err == nil }) {
		t.Fatalf("status file not at -status: %v", err)
	}
	var st status
	if err := json.Unmarshal(b, &st); err != nil || st.In != in || st.Out != out {
		t.Errorf("status %s names in %q out %q (%v), want %q and %q", statusPath, st.In, st.Out, err, in, out)
	}
	r.close()
	a.stop()
	for _, p := range []string{in, out} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s, made by the agent, is left after it stopped", p)
		}
	}
}

// TestJSONLogs: -log-format json writes one JSON object per line, on stderr
// only; -log-level error keeps info lines out.
func TestJSONLogs(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-log-format", "json"}, program: sh(t, "exec cat")})
	roundTrip(t, a.in, openReader(t, a.out), "logged")
	a.stop()
	lines := strings.Split(strings.TrimSpace(a.stderr()), "\n")
	if len(lines) < 2 {
		t.Fatalf("want some log lines, got %q", a.stderr())
	}
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["level"] == nil || rec["msg"] == nil {
			t.Errorf("log line is not a JSON record with level and msg: %q (%v)", line, err)
		}
	}

	quiet := startAgent(t, agentConfig{flags: []string{"-log-level", "error"}, program: sh(t, "exec cat")})
	roundTrip(t, quiet.in, openReader(t, quiet.out), "quiet")
	quiet.stop()
	if s := quiet.stderr(); strings.Contains(s, "level=INFO") {
		t.Errorf("-log-level error still logs info lines:\n%s", s)
	}
}

// TestEnvironmentFlags: FIFOBRIDGE_<NAME> sets a run flag, and the command
// line wins over it.
func TestEnvironmentFlags(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	// The environment asks for exec mode; the command line says stream,
	// so a line comes back raw, not as frames.
	a := startAgent(t, agentConfig{
		flags:   []string{"-mode", "stream"},
		env:     []string{"FIFOBRIDGE_MODE=exec", "FIFOBRIDGE_PERM=0600", "FIFOBRIDGE_RESTART=never"},
		program: sh(t, `read line; echo "$line"; exit 5`),
	})
	r := openReader(t, a.out)
	roundTrip(t, a.in, r, "raw line")
	if code := a.wait(hangTimeout); code != 5 {
		t.Fatalf("agent exited %d; FIFOBRIDGE_RESTART=never should end it with the child's 5", code)
	}
	// The first agent's FIFOs are gone with it; check the mode on one
	// that runs.
	b := startAgent(t, agentConfig{env: []string{"FIFOBRIDGE_PERM=0600"}, program: sh(t, "exec cat")})
	waitServing(t, b)
	if fi, err := os.Lstat(b.in); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("FIFOBRIDGE_PERM=0600 gave %v (%v)", fi.Mode(), err)
	}
	b.stop()
}

// TestRestartWindow: only restarts inside -restart-window count towards
// -max-restarts; a child that fails more slowly is restarted for good.
func TestRestartWindow(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	t.Run("slow failures never exhaust the limit", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{
			flags:   []string{"-max-restarts", "1", "-restart-window", "200ms", "-backoff-min", "10ms"},
			program: sh(t, "sleep 0.4; exit 1"),
		})
		a.waitStatus("four starts", func(s status) bool { return s.Child.Starts >= 4 })
		a.requireRunning()
		a.stop()
	})
	t.Run("fast failures do", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{
			flags:   []string{"-max-restarts", "1", "-restart-window", "1m", "-backoff-min", "10ms"},
			program: sh(t, "sleep 0.2; exit 1"),
		})
		if code := a.wait(hangTimeout); code != 1 {
			t.Fatalf("agent exited %d, want the last child's 1", code)
		}
	})
}

// TestVersion: fifobridge version prints its name and version and exits 0.
func TestVersion(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	out, err := runQuiet(agentBin, "version")
	if err != nil || !strings.HasPrefix(out, "fifobridge ") {
		t.Fatalf("fifobridge version: %q, %v", out, err)
	}
}

// TestStopSignal: -stop-signal is what a stop sends; a child that ignores
// TERM but ends on USR1 stops at once and cleanly.
func TestStopSignal(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		flags:   []string{"-stop-signal", "USR1", "-stop-timeout", "10s"},
		program: sh(t, `trap "" TERM; trap "exit 0" USR1; echo ready; while :; do sleep 0.05; done`),
	})
	openReader(t, a.out).expectLine("ready")
	if code := a.stop(); code != 0 {
		t.Fatalf("agent exited %d, want 0: USR1 should have ended the child, not SIGKILL after 10 s", code)
	}
}

// TestSendID: send -id names the request; the agent reports it by that id.
func TestSendID(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: sh(t, "sleep 30")})
	waitServing(t, a)
	res := runSend(t, a.dir, nil, "-id", "my-request-7", "-timeout", "300ms", "x")
	res.requireCode(t, 124)
	if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), "id=my-request-7") }) {
		t.Fatalf("the agent never named request my-request-7; stderr:\n%s", a.stderr())
	}
	requireNoReplies(t, a.dir)
}
