//go:build linux

package test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// waitFile waits (at most hangTimeout) until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	if !eventually(hangTimeout, func() bool { _, err := os.Lstat(path); return err == nil }) {
		t.Fatalf("%s did not appear", path)
	}
}

// TestSendThroughGracefulStop (issue 8, finding 5): the agent is stopped
// while a send's request runs; the child traps TERM, takes a moment, prints
// its last words and exits 3 within -stop-timeout. The agent closed its
// input FIFO at the stop, but it still owes the request its frames: send
// prints them and exits with the child's code, not 125 "the agent went
// away".
func TestSendThroughGracefulStop(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	mark := filepath.Join(t.TempDir(), "trapped")
	// The trap's sleep is the child's own slow shutdown, longer than the
	// period at which send looks for an agent.
	program := sh(t, `trap 'sleep 1; echo bye; exit 3' TERM; echo hi; touch "$1"; sleep 30 & wait`)
	program = append(program, mark)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec", "-stop-timeout", "10s"}, program: program})
	waitServing(t, a)
	s := startSend(t, a.dir, nil, nil, "go")
	waitFile(t, mark) // the request runs and its trap is set
	a.signal(syscall.SIGTERM)
	res := s.wait(t, hangTimeout)
	res.requireCode(t, 3)
	if string(res.stdout) != "hi\nbye\n" {
		t.Fatalf("send printed %q, want %q; stderr:\n%s", res.stdout, "hi\nbye\n", res.stderr)
	}
	if code := a.wait(hangTimeout); code != 0 {
		t.Fatalf("agent exited %d, want 0", code)
	}
	requireNoReplies(t, a.dir)
}

// TestSendAgentKilledWhileQueued: a request still waiting for a slot when
// the agent is killed ends with 125 and one line, not with send's timeout.
func TestSendAgentKilledWhileQueued(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	mark := filepath.Join(t.TempDir(), "busy")
	program := append(sh(t, `touch "$1"; exec sleep 30`), mark)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec", "-max-concurrent", "1"}, program: program})
	waitServing(t, a)
	busy := startSend(t, a.dir, nil, nil, "first")
	waitFile(t, mark)
	queued := startSend(t, a.dir, nil, nil, "-timeout", "20s", "second")
	if !eventually(hangTimeout, func() bool { return len(replyNames(t, a.dir)) == 2 }) {
		t.Fatalf("the second send made no reply FIFO")
	}
	a.signal(syscall.SIGKILL)
	a.wait(hangTimeout)
	for _, s := range []*sendCmd{busy, queued} {
		res := s.wait(t, hangTimeout)
		res.requireCode(t, 125)
		requireOneLine(t, "send", res.stderr)
	}
	requireNoReplies(t, a.dir)
}
