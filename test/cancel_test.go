//go:build linux

package test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCancel: {"cancel":"ID"} for a queued request (it never starts and
// gets one error frame "canceled"), a running one (stopped, its exit frame
// says canceled), a finished one and an unknown one (one error frame with
// that id each).
func TestCancel(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a, w, r := startExec(t, agentConfig{
		program: binSh(`read x; if [ "$x" = slow ]; then echo started; exec sleep 60; fi; echo "$x"`),
		flags:   []string{"-max-concurrent", "1", "-stop-timeout", "1s"},
	})
	all := map[string]*response{}
	w.writeLine(`{"id":"r1","stdin":"slow\n"}`)
	for all["r1"] == nil || string(all["r1"].stdout) != "started\n" {
		addFrame(t, all, readFrame(t, r))
	}
	w.writeLine(`{"id":"r2","stdin":"fast\n"}`) // queued behind r1
	w.writeLine(`{"cancel":"r2"}`)
	collect(t, r, all, "r2")
	if e := all["r2"].err; e == nil || e.Error != "canceled" {
		t.Fatalf("queued request canceled: want one error frame \"canceled\":%s", all["r2"])
	}

	w.writeLine(`{"cancel":"r1"}`)
	collect(t, r, all, "r1")
	if x := all["r1"].exit; x == nil || !strings.Contains(x.line, `"canceled":true`) {
		t.Fatalf("running request canceled: want an exit frame with canceled:%s", all["r1"])
	}
	if x := all["r1"].exit; *x.Code != 128+int(syscall.SIGTERM) || strings.Contains(x.line, `"killed":true`) {
		t.Errorf("canceled request ended %s; want by TERM, without escalation", x.line)
	}

	w.writeLine(`{"id":"r3","stdin":"fast\n"}`)
	collect(t, r, all, "r3")
	all["r3"].requireExit(t, 0, "fast\n")
	w.writeLine(`{"cancel":"r3"}`)
	if f := readFrame(t, r); f.ID != "r3" || f.Type != "error" {
		t.Fatalf("cancel of a finished request: got %s, want one error frame for r3", f.line)
	}
	w.writeLine(`{"cancel":"nope"}`)
	if f := readFrame(t, r); f.ID != "nope" || f.Type != "error" {
		t.Fatalf("cancel of an unknown request: got %s, want one error frame for nope", f.line)
	}
	r.expectQuiet(100 * time.Millisecond)
	if code := a.stop(); code != 0 {
		t.Errorf("agent exited %d", code)
	}
}

// TestCancelKilled: a canceled request whose tree ignores the stop signal
// is killed at -stop-timeout, and its exit frame says killed, with a
// cgroup (cgroup.kill) and without (SIGKILL).
func TestCancelKilled(t *testing.T) {
	t.Parallel()
	for _, cgroup := range []string{"auto", "off"} {
		t.Run(cgroup, func(t *testing.T) { testCancelKilled(t, cgroup) })
	}
}

func testCancelKilled(t *testing.T, cgroup string) {
	checkLeaks(t, false)
	a, w, r := startExec(t, agentConfig{
		program: binSh(`trap '' TERM; echo started; sleep 60 & wait`),
		flags:   []string{"-stop-timeout", "200ms", "-cgroup", cgroup},
	})
	all := map[string]*response{}
	w.writeLine(`{"id":"k"}`)
	for all["k"] == nil || len(all["k"].stdout) == 0 {
		addFrame(t, all, readFrame(t, r))
	}
	w.writeLine(`{"cancel":"k"}`)
	collect(t, r, all, "k")
	if x := all["k"].exit; x == nil || !strings.Contains(x.line, `"canceled":true`) || !strings.Contains(x.line, `"killed":true`) {
		t.Fatalf("want an exit frame with canceled and killed:%s", all["k"])
	}
	a.stop()
}

// TestCancelInterruptedSend: a send that is interrupted cancels its
// request; the child is gone within -stop-timeout + 1 s although the
// request's reply FIFO is still open for reading elsewhere.
func TestCancelInterruptedSend(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	pidFile := filepath.Join(t.TempDir(), "pid")
	a := startAgent(t, agentConfig{
		program: binSh(`echo $$ > ` + pidFile + `.tmp && mv ` + pidFile + `.tmp ` + pidFile + `; exec sleep 60`),
		flags:   []string{"-mode", "exec", "-stop-timeout", "1s"},
	})
	waitServing(t, a)
	s := startSend(t, a.dir, nil, nil, "x")
	var child int
	if !eventually(hangTimeout, func() bool {
		b, err := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && child > 0
	}) {
		t.Fatal("the request's child did not start")
	}
	// Hold the reply FIFO open for reading, as another process might.
	entries, err := os.ReadDir(filepath.Join(a.dir, "replies"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one reply FIFO: %v, %v", entries, err)
	}
	held, err := os.OpenFile(filepath.Join(a.dir, "replies", entries[0].Name()), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	s.cmd.Process.Signal(syscall.SIGINT)
	begin := time.Now()
	if !eventually(stopBound(time.Second), func() bool { return !alive(child) }) {
		t.Fatalf("child %d still runs %v after send was interrupted", child, time.Since(begin))
	}
	s.wait(t, hangTimeout)
	// The exit frame went to the reply FIFO, which the test still reads.
	held.SetReadDeadline(time.Now().Add(hangTimeout))
	lines := bufio.NewScanner(held)
	for lines.Scan() {
		var f execFrame
		if json.Unmarshal(lines.Bytes(), &f) == nil && f.Type == "exit" {
			if !strings.Contains(lines.Text(), `"canceled":true`) {
				t.Errorf("exit frame %s does not say canceled", lines.Text())
			}
			break
		}
	}
	a.stop()
}
