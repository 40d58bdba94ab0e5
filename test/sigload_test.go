//go:build linux

package test

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestSignalReservedUnderLoad: the realtime signals 32 and 34, sent again
// and again to an exec-mode agent (not PID 1) that starts 400 requests,
// one after each frame it writes, never end it, and every request gets its
// exit frame; twenty trials (two with -short).
func TestSignalReservedUnderLoad(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatalf("find true(1): %v", err)
	}
	const requests = 400
	for trial := range soak("", 2, 20) {
		a, w, r := startExec(t, agentConfig{flags: []string{"-max-concurrent", "8"}, program: []string{truePath}})
		var lines strings.Builder
		for i := range requests {
			fmt.Fprintf(&lines, "{\"id\":\"r%d\"}\n", i)
		}
		w.write([]byte(lines.String()))
		all := map[string]*response{}
		for n, ended := 0, 0; ended < requests; n++ {
			if addFrame(t, all, readFrame(t, r)).done() {
				ended++
			}
			// Forks go on meanwhile: the agent is at every stage of one.
			a.signal(syscall.Signal(32 + 2*(n%2)))
		}
		for id, resp := range all {
			if resp.exit == nil || *resp.exit.Code != 0 {
				t.Fatalf("trial %d: request %s did not exit 0:%s", trial, id, resp)
			}
		}
		a.requireRunning()
		w.close()
		if code := a.stop(); code != 0 {
			t.Fatalf("trial %d: agent exited with %d, want 0", trial, code)
		}
		r.close()
	}
}
