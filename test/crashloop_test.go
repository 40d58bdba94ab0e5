//go:build linux

package test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHealthCrashLoop (issue 18): with -max-restarts -1 a child that dies
// every second is restarted for ever; from its third quick run (under
// -restart-window) health exits 1 and says why, whether it samples the
// child running or the agent waiting to restart it. A Docker HEALTHCHECK
// or a Kubernetes probe then sees the crash loop.
func TestHealthCrashLoop(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	for _, tc := range []struct {
		name    string
		script  string // the child: dies after about a second, or at once
		backoff string // -backoff-min and -max: the time between a death and the restart
		state   string // the state health is asked in
	}{
		{"while the child runs", "sleep 1; exit 3", "100ms", "running"},
		{"while in backoff", "exit 3", "1s", "backoff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{program: sh(t, tc.script),
				flags: []string{"-max-restarts", "-1", "-backoff-min", tc.backoff, "-backoff-max", tc.backoff}})
			// All inside the default -restart-window of a minute.
			a.waitStatus("the third restart", func(st status) bool { return st.Child.Restarts >= 3 })
			looped := time.Now()
			a.waitStatus("state "+tc.state, func(st status) bool { return st.State == tc.state })
			code, stderr := health(t, nil, "-dir", a.dir)
			if code != 1 || !strings.Contains(stderr, "crash loop: ") || !strings.Contains(stderr, "runs in a row ended within -restart-window (1m0s)") {
				t.Fatalf("health in a crash loop exited %d, want 1 naming the crash loop; stderr:\n%s", code, stderr)
			}
			requireOneLine(t, "health", stderr)
			if took := time.Since(looped); took > busySlack {
				t.Fatalf("health said so %v after the third restart, want at once", took)
			}
			// health -wait does not take a crash loop for health either.
			if code, stderr := health(t, nil, "-dir", a.dir, "-wait", "300ms"); code != 1 || !strings.Contains(stderr, "crash loop") {
				t.Fatalf("health -wait in a crash loop exited %d, want 1; stderr:\n%s", code, stderr)
			}
		})
	}
}

// TestHealthCrashLoopBackoff (issue 26): the crash-loop rule goes by
// consecutive quick runs, not by restarts inside -restart-window. With
// -backoff-max above -restart-window, a child that keeps dying stays
// unhealthy on every poll however long its backoff has grown (the old
// rule found fewer than three restarts inside the window once the backoff
// passed a third of it and called it healthy), and a child that then runs
// steadily is healthy again once it has run 10 s, or a whole
// -restart-window when that is shorter (the old rule waited until its
// restarts left the window).
func TestHealthCrashLoopBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		window string
		deaths int // quick deaths before the child stays up
		// backoff is -backoff-min and -backoff-max.
		backoffMin, backoffMax string
		// healthyWithin bounds how long after the steady child's start
		// health may still say crash loop: its settling time (10 s, or
		// the window when shorter), plus the status file's rewrite and
		// a margin for a loaded machine.
		healthyWithin time.Duration
	}{
		// 100ms, 200ms, ... 1.6s, then three backoffs at the 3s cap.
		{"backoff past the window", "1s", 9, "100ms", "3s", 6 * time.Second},
		// Five quick deaths, then steady: 10 s, not the 30 s window.
		{"recovered", "30s", 5, "100ms", "100ms", 18 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			count := filepath.Join(t.TempDir(), "count")
			script := fmt.Sprintf(`n=$(cat %[1]s 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]s
				[ $n -gt %[2]d ] && exec sleep 1000; exit 3`, count, tc.deaths)
			a := startAgent(t, agentConfig{program: sh(t, script), flags: []string{
				"-max-restarts", "-1", "-restart-window", tc.window,
				"-backoff-min", tc.backoffMin, "-backoff-max", tc.backoffMax}})
			steady := tc.deaths + 1 // the start of the child that stays up
			a.waitStatus("the third quick death", func(st status) bool {
				return st.Child.Starts > 3 || st.Child.Starts == 3 && st.Child.PID == 0 && st.Child.LastExit != nil
			})
			// Every poll until the steady child started says crash loop:
			// a status read after health that shows it not yet started
			// means that every run health could see ended quickly.
			// health is sampled at 10 Hz: the sleep is the sampling rate.
			polls := 0
			for {
				code, stderr := health(t, nil, "-dir", a.dir)
				st, err := a.readStatus()
				if err != nil {
					t.Fatal(err)
				}
				if st.Child.Starts >= steady {
					break
				}
				polls++
				if code != 1 || !strings.Contains(stderr, "crash loop: ") {
					t.Fatalf("poll %d, after %d starts: health exited %d, want 1 for a crash loop; stderr:\n%s",
						polls, st.Child.Starts, code, stderr)
				}
				time.Sleep(100 * time.Millisecond)
			}
			up := time.Now()
			a.waitStatus("the steady child running", func(st status) bool { return st.State == "running" && st.Child.Starts == steady })
			code, stderr := 1, ""
			for time.Since(up) < tc.healthyWithin {
				if code, stderr = health(t, nil, "-dir", a.dir); code == 0 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if code != 0 {
				t.Fatalf("a child up for %v is still unhealthy (exit %d): %s", tc.healthyWithin, code, stderr)
			}
			t.Logf("%d polls in the crash loop; healthy %v after the steady start", polls, time.Since(up).Round(time.Millisecond))
			if code := a.stop(); code != 143 && code != 0 {
				t.Fatalf("agent exited %d after TERM", code)
			}
		})
	}
}
