//go:build linux

package test

import (
	"fmt"
	"testing"
	"time"
)

// `fifobridge close -all` closes every open session, on pipes and on
// terminals, in parallel: sessions whose shells ignore their stop signal
// and keep a background job are all gone within one -stop-timeout (+ 1 s,
// with busySlack), not one each: their directories, their processes,
// their cgroups. It exits 0, and 0 again with none open.
func TestCloseAll(t *testing.T) {
	checkLeaks(t, true)
	cg := testCgroup(t)
	a := startSessionsAgent(t, []string{"-stop-timeout", "2s", "-cgroup", cg},
		binSh(`trap '' HUP TERM; sleep 300 & printf '> '; while :; do sleep 1; done`))
	a.host("close", "-all").requireCode(t, "close -all with none open", 0, "")
	const n = 6
	for i := range n {
		tty := fmt.Sprintf("-tty=%v", i%2 == 0)
		a.host("open", tty, "-prompt", `^> $`, fmt.Sprintf("s%d", i)).requireCode(t, "open", 0, "")
	}
	if got := len(sleepsIn(a.pid)); got < n {
		t.Fatalf("%d background sleeps run, want %d", got, n)
	}
	if got := len(childCgroups(cg)); got != n {
		t.Fatalf("%d cgroups, want one per session (%d)", got, n)
	}
	start := time.Now()
	a.host("close", "-all").requireCode(t, "close -all", 0, "")
	if took := time.Since(start); took > stopBound(2*time.Second) {
		t.Errorf("close -all of %d sessions that ignore their stop signal took %v: not in parallel", n, took)
	} else {
		t.Logf("close -all took %v", took)
	}
	if left := a.sessionNames(); len(left) > 0 {
		t.Errorf("left in DIR/sessions: %v", left)
	}
	if left := childrenOf(a.pid); len(left) > 0 {
		t.Errorf("processes left after close -all:%s", describe(left))
	}
	if left := sleepsIn(a.pid); len(left) > 0 {
		t.Errorf("background jobs left: %v", left)
	}
	requireNoCgroups(t, cg, hangTimeout)
	if res := a.host("ls"); res.code != 0 || res.stdout != "" {
		t.Errorf("ls after close -all: exit %d, %q", res.code, res.stdout)
	}
	a.host("close", "-all").requireCode(t, "close -all again", 0, "")
	a.host("close", "-all", "s1").requireCode(t, "close -all NAME", 125, "-all takes no NAME")
	a.requireRunning()
	if code := a.stop(); code != 0 {
		t.Errorf("agent exit code %d, want 0", code)
	}
}

// close -all to an agent that is not in sessions mode writes nothing and
// exits 125 with one line.
func TestCloseAllWrongMode(t *testing.T) {
	checkLeaks(t, true)
	a := startAgent(t, agentConfig{program: []string{"cat"}})
	a.waitStatus("a running child", func(st status) bool { return st.State == "running" && st.Child.PID > 0 })
	a.host("close", "-all").requireCode(t, "close -all in stream mode", 125, "stream mode")
}
