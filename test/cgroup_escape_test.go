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
	"time"

	"golang.org/x/sys/unix"
)

// TestGroupLeftCgroup: a child's background job that ignores TERM, stays
// in the child's process group and moves itself to another cgroup is
// stopped with the child, at the end of its request and at the agent's
// TERM, with cgroups as without.
func TestGroupLeftCgroup(t *testing.T) {
	for _, containment := range []string{"cgroup", "off"} {
		for _, end := range []string{"RequestEnd", "AgentTerm"} {
			t.Run(containment+"/"+end, func(t *testing.T) {
				base := testCgroup(t)
				checkLeaks(t, true)
				agentDir, other := filepath.Join(base, "agent"), filepath.Join(base, "other")
				for _, d := range []string{agentDir, other} {
					if err := os.Mkdir(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				cgroup := agentDir
				if containment == "off" {
					cgroup = "off"
				}
				tmp := t.TempDir()
				sync, pidFile := filepath.Join(tmp, "sync"), filepath.Join(tmp, "pid")
				if err := unix.Mkfifo(sync, 0o600); err != nil {
					t.Fatal(err)
				}
				script := fmt.Sprintf(`/bin/sh -c 'trap "" TERM; echo $$ > %[1]s/cgroup.procs && echo $$ > %[2]s.tmp && mv %[2]s.tmp %[2]s; echo moved > %[3]s; exec sleep 60' </dev/null >/dev/null 2>&1 &
read x < %[3]s; echo "$x"`, other, pidFile, sync)
				if end == "AgentTerm" {
					script += "; exec sleep 60"
				}
				a, w, r := startExec(t, agentConfig{program: binSh(script),
					flags: []string{"-cgroup", cgroup, "-stop-timeout", "1s"}})
				defer w.close()
				defer r.close()
				w.writeLine(`{"id":"job"}`)
				if f := readFrame(t, r); f.Type != "start" {
					t.Fatalf("first frame %s, want start", f.line)
				}
				if f := readFrame(t, r); f.Type != "stdout" || f.Data == nil || *f.Data != "moved\n" {
					t.Fatalf("frame %s, want the job's stdout \"moved\"", f.line)
				}
				b, err := os.ReadFile(pidFile)
				if err != nil {
					t.Fatal(err)
				}
				job, err := strconv.Atoi(strings.TrimSpace(string(b)))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { syscall.Kill(job, syscall.SIGKILL) })
				if procs, _ := os.ReadFile(filepath.Join(other, "cgroup.procs")); !strings.Contains(string(procs), fmt.Sprint(job)) {
					t.Fatalf("the job %d is not in the other cgroup (%q); the test needs it there", job, procs)
				}
				if pgid, err := syscall.Getpgid(job); err != nil || pgid == job {
					t.Fatalf("the job %d has group %d (%v); the test needs it in the child's group", job, pgid, err)
				}
				if end == "RequestEnd" {
					if f := readFrame(t, r); f.Type != "exit" {
						t.Fatalf("frame %s, want exit", f.line)
					}
					requireGone(t, "the background job that left the cgroup, after its request ended,", job)
					a.requireRunning()
				} else {
					begin := time.Now()
					if code := a.stop(); code != 0 {
						t.Errorf("agent exited %d after TERM, want 0", code)
					}
					requireGone(t, "the background job that left the cgroup, after the agent's TERM,", job)
					t.Logf("agent stopped in %v", time.Since(begin).Round(time.Millisecond))
				}
			})
		}
	}
}
