//go:build linux

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/cgroup/cgrouptest"
)

// agentCgroups lists the cgroups agent pid made in dir (named
// fifobridge-<pid ns>-<pid>-<start>-<seq>, and its anchor -a<try>).
func agentCgroups(dir string, pid int) []string {
	var mine []string
	for _, name := range subCgroups(dir) {
		f := strings.Split(name, "-")
		if len(f) == 5 && f[0] == "fifobridge" && f[2] == fmt.Sprint(pid) {
			mine = append(mine, name)
		}
	}
	return mine
}

// TestCgroupExecRequests: 1,000 requests with -cgroup auto, each in a
// new cgroup of its own, leave no request's cgroup behind (only the one
// made ahead for the next request, empty, which goes with the agent) and
// the agent's descriptor count as it was.
func TestCgroupExecRequests(t *testing.T) {
	t.Parallel()
	testCgroup(t) // skips without a writable cgroup v2
	own, err := ownCgroup()
	if err != nil {
		t.Fatal(err)
	}
	checkLeaks(t, false)
	n := soak("", 300, 1000)
	a, w, r := startExec(t, agentConfig{
		program: binSh(`read x; cat /proc/self/cgroup | grep '^0::'`),
		flags:   []string{"-cgroup", "auto", "-max-concurrent", "4"},
	})
	pid := fmt.Sprint(a.pid)
	w.writeLine("warm")
	resp := nextResponse(t, r)
	if resp.exit == nil || !strings.Contains(string(resp.stdout), "/fifobridge-") {
		t.Fatalf("request did not run in a cgroup of its own: %q%s", resp.stdout, resp)
	}
	if st := a.waitExecStatus("warm-up done", func(st status) bool { return st.Requests.Completed == 1 }); st.Containment != "cgroup" {
		t.Errorf("status says containment %q, want cgroup", st.Containment)
	}
	before, beforeList := fdCount(pid), fdTargets(pid)

	done := make(chan error, 1)
	go func() {
		w.f.SetWriteDeadline(time.Now().Add(2 * time.Minute))
		_, err := w.f.Write([]byte(strings.Repeat("x\n", n)))
		done <- err
	}()
	out := make(map[string]string, n) // request id: its stdout
	for exits := 0; exits < n; {
		f := readFrame(t, r)
		switch f.Type {
		case "stdout":
			if f.Data != nil {
				out[f.ID] += *f.Data
			}
		case "exit":
			if *f.Code != 0 {
				t.Fatalf("request failed: %s", f.line)
			}
			exits++
		case "error":
			t.Fatalf("request rejected: %s", f.line)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	a.waitExecStatus("all completed", func(st status) bool { return st.Requests.Completed == n+1 && st.Requests.Active == 0 })
	used := make(map[string]bool, n)
	for id, o := range out {
		cg := filepath.Base(strings.TrimSpace(o))
		if used[cg] {
			t.Errorf("request %s ran in cgroup %s, which another request had", id, cg)
		}
		used[cg] = true
	}
	if len(used) != n {
		t.Errorf("%d requests reported %d cgroups", n, len(used))
	}
	// While it serves, the agent keeps, besides its anchor, one cgroup
	// made ahead for the next request (cgroup.Manager.Prepare): empty, and
	// no request's.
	var left []string
	if !eventually(5*time.Second, func() bool {
		left = slices.DeleteFunc(agentCgroups(own, a.pid), cgrouptest.IsAnchor)
		return len(left) <= 1
	}) {
		t.Errorf("cgroups left in %s: %v", own, left)
	}
	for _, cg := range left {
		if used[cg] {
			t.Errorf("cgroup %s of a finished request is still there", cg)
		}
		if procs, _ := os.ReadFile(filepath.Join(own, cg, "cgroup.procs")); len(procs) > 0 {
			t.Errorf("the cgroup made ahead, %s, holds processes: %s", cg, procs)
		}
	}
	var after int
	if !eventually(5*time.Second, func() bool { after = fdCount(pid); return after == before }) {
		t.Errorf("agent has %d descriptors after %d requests, %d before\nbefore:\n%safter:\n%s", after, n, before, beforeList, fdTargets(pid))
	}
	a.stop()
	if left := agentCgroups(own, a.pid); len(left) > 0 {
		t.Errorf("cgroups left after the agent exited: %v", left)
	}
}

// TestCgroupOff: with -cgroup off the tree stop ends a child's background
// process in a session of its own, and the status says tree.
func TestCgroupOff(t *testing.T) {
	t.Parallel()
	dir := testCgroup(t)
	testTreeContainment(t, agentConfig{flags: []string{"-cgroup", "off"}})
	requireNoCgroups(t, dir, 0)
}

// TestCgroupAutoWithoutCgroup2: -cgroup auto where no cgroup2 is mounted
// (a mount namespace with a tmpfs over /sys/fs/cgroup) falls back to the
// tree stop with one line saying why.
func TestCgroupAutoWithoutCgroup2(t *testing.T) {
	t.Parallel()
	requirePrivileged(t, "a mount namespace without cgroup2")
	a := testTreeContainment(t, agentConfig{
		flags: []string{"-cgroup", "auto"},
		wrap:  []string{"unshare", "--mount", "--", "/bin/sh", "-c", `mount -t tmpfs none /sys/fs/cgroup && exec "$@"`, "sh"},
	})
	if n := strings.Count(a.stderr(), "no usable cgroup v2"); n != 1 {
		t.Errorf("agent said %d times why it uses no cgroup, want once:\n%s", n, a.stderr())
	}
}

// testTreeContainment starts a stream agent whose child leaves a process
// in a session of its own, checks that the status says tree, and that a
// stop ends that process.
func testTreeContainment(t *testing.T, cfg agentConfig) *agent {
	t.Helper()
	checkLeaks(t, false)
	cfg.program = binSh(`setsid sleep 60 </dev/null & echo ready; exec sleep 60`)
	a := startAgent(t, cfg)
	r := openReader(t, a.out)
	r.expectLine("ready")
	// No PID namespace here: the child's pid is the same to the test.
	st := a.waitStatus("a child", func(st status) bool { return st.Containment != "" && st.Child.PID > 0 })
	if st.Containment != "tree" {
		t.Errorf("status says containment %q, want tree", st.Containment)
	}
	if cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", st.Child.PID)); strings.Contains(string(cg), "fifobridge-") {
		t.Errorf("child runs in a cgroup of its own: %s", cg)
	}
	a.stop()
	m := marker(t)
	var left []procStat
	if !eventually(5*time.Second, func() bool { left = markedProcs(m); return len(left) == 0 }) {
		t.Errorf("processes left after the tree stop:%s", describe(left))
	}
	return a
}

// TestCgroupBadDir: a -cgroup that is no cgroup v2 directory is the
// agent's own failure, with one clear line.
func TestCgroupBadDir(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		code, stderr := runAgent(t, nil, "run", "-dir", filepath.Join(t.TempDir(), "fb"), "-cgroup", dir, "--", "true")
		if code != 125 || !strings.Contains(stderr, "-cgroup") {
			t.Errorf("-cgroup %s: exit %d, stderr %q; want 125 naming -cgroup", dir, code, stderr)
		}
		requireOneLine(t, "agent with a bad -cgroup", stderr)
	}
}
