//go:build linux

package test

import (
	"strings"
	"testing"
)

// TestSendEnvOnlyDir: send reads FIFOBRIDGE_DIR and no other FIFOBRIDGE_*
// variable. FIFOBRIDGE_TIMEOUT and FIFOBRIDGE_ID, meant for run in the same
// environment, change neither send's -timeout (nor the request's limit) nor
// its request id.
func TestSendEnvOnlyDir(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: sh(t, `sleep 1; echo done`)})
	waitServing(t, a)
	env := []string{"FIFOBRIDGE_DIR=" + a.dir, "FIFOBRIDGE_TIMEOUT=100ms", "FIFOBRIDGE_ID=from-env", "FIFOBRIDGE_WAIT=bogus"}
	res := startSend(t, "", env, nil, "x").wait(t, hangTimeout)
	res.requireCode(t, 0)
	if string(res.stdout) != "done\n" {
		t.Fatalf("send printed %q, want %q; stderr:\n%s", res.stdout, "done\n", res.stderr)
	}
	if strings.Contains(a.stderr(), "from-env") {
		t.Fatalf("send took its request id from FIFOBRIDGE_ID; agent log:\n%s", a.stderr())
	}
}

// TestHealthEnv: health reads FIFOBRIDGE_DIR and FIFOBRIDGE_STATUS, the
// variables that name the file run writes, and no other.
func TestHealthEnv(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	dir := t.TempDir()
	statusPath := dir + "/elsewhere.json"
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec", "-status", statusPath}, program: []string{busybox, "cat"}})
	waitServing(t, a)
	env := []string{"FIFOBRIDGE_DIR=" + a.dir, "FIFOBRIDGE_STATUS=" + statusPath, "FIFOBRIDGE_TIMEOUT=bogus", "FIFOBRIDGE_MODE=bogus"}
	// The agent writes "running" once it serves.
	if !eventually(hangTimeout, func() bool { code, _ := health(t, env); return code == 0 }) {
		requireHealth(t, 0, env)
	}
	requireHealth(t, 1, []string{"FIFOBRIDGE_DIR=" + a.dir})
}
