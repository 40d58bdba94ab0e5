//go:build linux

package test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestExecStopWithoutReaders: a stop is honoured within -stop-timeout + 1 s
// even when nobody reads the output FIFO and it is full.
func TestExecStopWithoutReaders(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		flags: []string{"-mode", "exec", "-stop-timeout", "1s"},
		// Output without end: more than the FIFO (1 MiB) and every
		// buffer on the way hold.
		program: sh(t, `tr '\0' x </dev/zero`),
	})
	w := openWriter(t, a.in)
	w.writeLine("go")
	a.waitStatus("request running", func(s status) bool { return statusActive(t, a) == 1 })
	// The output FIFO is full, and so the agent takes no more of the
	// child's output: the child waits in its write.
	waitBlockedWriting(t)
	begin := time.Now()
	a.signal(syscall.SIGTERM)
	code := a.wait(hangTimeout)
	if took := time.Since(begin); took > stopBound(time.Second) {
		t.Errorf("stop took %v with nobody reading the output FIFO; want at most -stop-timeout + 1 s", took.Round(time.Millisecond))
	}
	if code != 0 {
		t.Errorf("agent exited %d, want 0", code)
	}
	w.close()
}

func statusActive(t *testing.T, a *agent) int {
	st, err := a.readStatus()
	if err != nil {
		return -1
	}
	return st.Requests.Active
}

// TestExecBadInputWithoutReaders: error frames nobody reads do not stop the
// agent from serving requests that have their own reply FIFO.
func TestExecBadInputWithoutReaders(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: sh(t, `cat`)})
	w := openWriter(t, a.in)
	for range 700 {
		w.writeLine("{bad json, and nobody reads the output FIFO")
	}
	w.close()
	requireServed(t, a.dir, []byte("still served\n"), "still served\n")
}

// TestExecReaderLeavesQuietRequest: when send gives up, the agent stops its
// request even though the child writes nothing, and the slot is free again.
func TestExecReaderLeavesQuietRequest(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		flags:   []string{"-mode", "exec", "-max-concurrent", "1"},
		program: sh(t, `read what; if [ "$what" = slow ]; then exec sleep 30; fi; echo fast`),
	})
	waitServing(t, a)
	s := startSend(t, a.dir, nil, nil, "slow")
	a.waitStatus("slow request running", func(status) bool { return statusActive(t, a) == 1 })
	s.cmd.Process.Signal(syscall.SIGINT)
	if res := s.wait(t, hangTimeout); res.code == 0 {
		t.Fatalf("interrupted send exited 0")
	}
	requireServed(t, a.dir, nil, "fast\n", "fast")
	if kids := childrenOf(a.pid); len(kids) != 0 {
		t.Fatalf("children left after both requests: %s", describe(kids))
	}
}

// TestExecInterruptedSendDoesNotSwallowTheNext: a send cancelled halfway
// through writing its large request leaves no half line for the next one.
func TestExecInterruptedSendDoesNotSwallowTheNext(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		flags:   []string{"-mode", "exec", "-max-concurrent", "1", "-max-request", "4MiB"},
		program: sh(t, `read what; if [ "$what" = busy ]; then exec sleep 30; fi; echo "$what"`),
	})
	waitServing(t, a)
	busy := startSend(t, a.dir, nil, nil, "-timeout", "20s", "busy")
	a.waitStatus("busy request running", func(status) bool { return statusActive(t, a) == 1 })
	// Queued behind busy; the agent stops reading, so this one's 500 KB
	// line cannot be written whole before its timeout.
	big := startSend(t, a.dir, nil, bytes.Repeat([]byte("y"), 500_000), "-timeout", "300ms")
	if res := big.wait(t, hangTimeout); res.code != 124 {
		t.Fatalf("big send exited %d, want 124; stderr %s", res.code, res.stderr)
	}
	busy.cmd.Process.Signal(syscall.SIGINT)
	busy.wait(t, hangTimeout)
	requireServed(t, a.dir, nil, "next\n", "next")
}

// TestExecLinesReadAtStop: lines the agent had read but not started when it
// was told to stop get an error frame each.
func TestExecLinesReadAtStop(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a, w, r := startExec(t, agentConfig{
		flags:   []string{"-max-concurrent", "1"},
		program: []string{busybox, "sleep", "30"},
	})
	for i := range 4 {
		w.writeLine(fmt.Sprintf(`{"id":"q%d"}`, i))
	}
	a.waitStatus("q0 running", func(status) bool { return statusActive(t, a) == 1 })
	w.waitDrained() // the rest is read and waits
	a.signal(syscall.SIGTERM)
	all := responses(t, r, "q0", "q1", "q2", "q3")
	if all["q0"].exit == nil {
		t.Errorf("q0: want an exit frame:%s", all["q0"])
	}
	for _, id := range []string{"q1", "q2", "q3"} {
		if all[id].err == nil || !strings.Contains(all[id].err.Error, "stopping") {
			t.Errorf("%s: want an error frame saying the agent is stopping:%s", id, all[id])
		}
	}
	if code := a.wait(hangTimeout); code != 0 {
		t.Fatalf("agent exited %d, want 0", code)
	}
}

// TestExecReplyRules: replies/ is sticky like /tmp, and a hard link is no
// reply FIFO (it could be the input FIFO itself).
func TestExecReplyRules(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a, w, r := startExec(t, agentConfig{program: sh(t, `cat`)})
	fi, err := os.Stat(filepath.Join(a.dir, "replies"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o733 {
		t.Errorf("replies/ has mode %v, want 1733: sticky, not listable", fi.Mode())
	}
	link := filepath.Join(a.dir, "replies", "loop")
	if err := os.Link(a.in, link); err != nil {
		t.Fatal(err)
	}
	w.writeLine(`{"id":"hl","reply":"loop","stdin":"x"}`)
	resp := nextResponse(t, r)
	resp.requireError(t)
	if kids := childrenOf(a.pid); len(kids) != 0 {
		t.Fatalf("a request ran through a hard link: %s", describe(kids))
	}
	os.Remove(link)
	w.writeLine(`{"id":"ok","stdin":"fine"}`)
	nextResponse(t, r).requireExit(t, 0, "fine")
}

// TestSendCleansUpOnEveryExit: HUP, QUIT and a closed stdout remove the
// reply FIFO as INT and TERM do.
func TestSendCleansUpOnEveryExit(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: sh(t, `sleep 30`)})
	waitServing(t, a)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		s := startSend(t, a.dir, nil, nil, "x")
		a.waitStatus("request running", func(status) bool { return statusActive(t, a) == 1 })
		s.cmd.Process.Signal(sig)
		if res := s.wait(t, hangTimeout); res.code != 128+int(sig) {
			t.Errorf("send after %v exited %d, want %d", sig, res.code, 128+int(sig))
		}
		requireNoReplies(t, a.dir)
		a.waitStatus("request stopped", func(status) bool { return statusActive(t, a) == 0 })
	}
}

// requireServed sends stdin (or TEXT) to the agent serving dir and requires
// exit code 0, stdout want, and no reply FIFO left behind.
func requireServed(t *testing.T, dir string, stdin []byte, want string, text ...string) {
	t.Helper()
	res := runSend(t, dir, stdin, append([]string{"-timeout", "5s"}, text...)...)
	res.requireCode(t, 0)
	if string(res.stdout) != want {
		t.Fatalf("send got %q, want %q", res.stdout, want)
	}
	requireNoReplies(t, dir)
}

// TestExecForwardsSignals: HUP, QUIT, USR1, USR2 and WINCH reach every
// running request's child, and stop nothing.
func TestExecForwardsSignals(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	script := `for s in HUP QUIT USR1 USR2 WINCH; do trap "echo $s" $s; done; echo ready; read x; while :; do sleep 0.05; done`
	a, w, r := startExec(t, agentConfig{program: sh(t, script)})
	w.writeLine(`{"id":"s1","stdin":""}`)
	w.writeLine(`{"id":"s2","stdin":""}`)
	ready := map[string]bool{}
	got := map[string]string{}
	for len(ready) < 2 {
		f := readFrame(t, r)
		if f.Type == "stdout" && f.Data != nil && strings.Contains(*f.Data, "ready") {
			ready[f.ID] = true
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH} {
		a.signal(sig)
		for _, id := range []string{"s1", "s2"} {
			got[id] = ""
		}
		for seen := 0; seen < 2; {
			f := readFrame(t, r)
			if f.Type == "exit" || f.Type == "error" {
				t.Fatalf("signal %v stopped a request: %s", sig, f.line)
			}
			if f.Type == "stdout" && f.Data != nil && strings.Contains(*f.Data, strings.TrimPrefix(unix.SignalName(sig), "SIG")) && got[f.ID] == "" {
				got[f.ID] = *f.Data
				seen++
			}
		}
	}
	a.requireRunning()
	if code := a.stop(); code != 0 {
		t.Fatalf("agent exited %d on TERM, want 0", code)
	}
}
