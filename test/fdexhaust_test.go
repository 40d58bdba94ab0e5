//go:build linux

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStopOutOfDescriptors: an agent that has run out of descriptors
// (its RLIMIT_NOFILE lowered to the descriptors it holds) still stops a
// canceled request's whole tree, with cgroups as without, down to a
// process in a session of its own that only the cgroup or a scan of /proc
// can find.
func TestStopOutOfDescriptors(t *testing.T) {
	t.Parallel()
	for _, containment := range []string{"cgroup", "off"} {
		t.Run(containment, func(t *testing.T) {
			cgroup := "off"
			if containment == "cgroup" {
				cgroup = testCgroup(t)
			}
			checkLeaks(t, false)
			pidFile := filepath.Join(t.TempDir(), "pid")
			a, w, r := startExec(t, agentConfig{
				program: binSh(`setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! > ` + pidFile + `; echo started; exec sleep 60`),
				flags:   []string{"-cgroup", cgroup, "-stop-timeout", "1s"},
			})
			defer w.close()
			defer r.close()
			w.writeLine(`{"id":"job"}`)
			all := map[string]*response{}
			for all["job"] == nil || string(all["job"].stdout) != "started\n" {
				addFrame(t, all, readFrame(t, r))
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			job, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			t.Cleanup(func() { syscall.Kill(job, syscall.SIGKILL) })

			// No descriptor number is left below the limit.
			limit := lowestFreeFD(t, a.pid)
			var old unix.Rlimit
			if err := unix.Prlimit(a.pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
				t.Fatal(err)
			}
			if err := unix.Prlimit(a.pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: old.Max}, nil); err != nil {
				t.Fatal(err)
			}
			w.writeLine(`{"cancel":"job"}`)
			resp := collect(t, r, all, "job")["job"]
			if resp.exit == nil || !strings.Contains(resp.exit.line, `"canceled":true`) {
				t.Fatalf("the job did not end canceled:%s", resp)
			}
			requireGone(t, "the job's process in a session of its own", job)
			a.requireRunning()
			if err := unix.Prlimit(a.pid, unix.RLIMIT_NOFILE, &old, nil); err != nil {
				t.Fatal(err)
			}
			if code := a.stop(); code != 0 {
				t.Errorf("agent exited %d, want 0", code)
			}
		})
	}
}

// lowestFreeFD returns the lowest descriptor number process pid has free.
func lowestFreeFD(t *testing.T, pid int) uint64 {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	used := map[uint64]bool{}
	for _, e := range entries {
		n, _ := strconv.ParseUint(e.Name(), 10, 64)
		used[n] = true
	}
	var fd uint64
	for used[fd] {
		fd++
	}
	return fd
}
