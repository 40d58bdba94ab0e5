package test

import (
	"strings"
	"testing"
	"time"
)

// TestHealthCrashLoop (issue 18): with -max-restarts -1 a child that dies
// every second is restarted for ever; from its third restart inside
// -restart-window health exits 1 and says why, whether it samples the
// child running or the agent waiting to restart it. A Docker HEALTHCHECK
// or a Kubernetes probe then sees the crash loop.
func TestHealthCrashLoop(t *testing.T) {
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
			checkLeaks(t, true)
			a := startAgent(t, agentConfig{program: sh(t, tc.script),
				flags: []string{"-max-restarts", "-1", "-backoff-min", tc.backoff, "-backoff-max", tc.backoff}})
			// All inside the default -restart-window of a minute.
			a.waitStatus("the third restart", func(st status) bool { return st.Child.Restarts >= 3 })
			looped := time.Now()
			a.waitStatus("state "+tc.state, func(st status) bool { return st.State == tc.state })
			code, stderr := health(t, nil, "-dir", a.dir)
			if code != 1 || !strings.Contains(stderr, "crash loop: ") || !strings.Contains(stderr, "restarts within -restart-window (1m0s)") {
				t.Fatalf("health in a crash loop exited %d, want 1 naming the crash loop; stderr:\n%s", code, stderr)
			}
			requireOneLine(t, "health", stderr)
			if took := time.Since(looped); took > 3*time.Second {
				t.Fatalf("health said so %v after the third restart, want within 3s", took)
			}
			// health -wait does not take a crash loop for health either.
			if code, stderr := health(t, nil, "-dir", a.dir, "-wait", "300ms"); code != 1 || !strings.Contains(stderr, "crash loop") {
				t.Fatalf("health -wait in a crash loop exited %d, want 1; stderr:\n%s", code, stderr)
			}
		})
	}
}
