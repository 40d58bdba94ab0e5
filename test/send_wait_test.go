//go:build linux

package test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSendWait: with -wait, send first waits for an agent to serve DIR (a
// container still starting) instead of failing at once.
func TestSendWait(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	dir := filepath.Join(t.TempDir(), "fb")
	s := startSend(t, dir, nil, nil, "-wait", "20s", "early")
	a := startAgent(t, agentConfig{dir: dir, flags: []string{"-mode", "exec"}, program: []string{busybox, "cat"}})
	res := s.wait(t, hangTimeout)
	res.requireCode(t, 0)
	if string(res.stdout) != "early\n" {
		t.Fatalf("send printed %q, want %q; stderr:\n%s", res.stdout, "early\n", res.stderr)
	}
	requireNoReplies(t, a.dir)

	// Without an agent, -wait ends and send fails as it would at once.
	res = runSend(t, filepath.Join(t.TempDir(), "none"), nil, "-wait", "300ms", "late")
	res.requireCode(t, 125)
	requireOneLine(t, "send", res.stderr)
}

// TestSendStreamMode: sent to an agent in stream mode, send writes nothing
// and exits 125 saying so.
func TestSendStreamMode(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{program: []string{busybox, "cat"}})
	r := openReader(t, a.out)
	a.waitStatus("running", func(st status) bool { return st.State == "running" })
	res := runSend(t, a.dir, nil, "-timeout", "3s", "hello")
	res.requireCode(t, 125)
	requireOneLine(t, "send", res.stderr)
	if !strings.Contains(res.stderr, "stream mode") {
		t.Fatalf("send's error does not say stream mode: %q", res.stderr)
	}
	r.expectQuiet(200 * time.Millisecond)
}

// TestHealthWait: health -wait exits 0 as soon as the agent is healthy, and
// 1 with the reason when it does not become healthy in time.
func TestHealthWait(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	dir := filepath.Join(t.TempDir(), "fb")
	done := make(chan int, 1)
	go func() { code, _ := health(t, nil, "-dir", dir, "-wait", "20s"); done <- code }()
	startAgent(t, agentConfig{dir: dir, flags: []string{"-mode", "exec"}, program: []string{busybox, "cat"}})
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("health -wait exited %d, want 0", code)
		}
	case <-time.After(hangTimeout):
		t.Fatal("health -wait did not return")
	}
	requireHealth(t, 1, nil, "-dir", filepath.Join(t.TempDir(), "none"), "-wait", "300ms")
}
