//go:build linux

package test

import (
	"fmt"
	"github.com/fifobridge/fifobridge/internal/testgate"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hangTimeout bounds every wait that only guards against a hang.
const hangTimeout = 10 * time.Second

// busySlack is what a test adds to a bound a user would notice (a stop
// within -stop-timeout + 1 s, an idle stop about -idle-timeout after the
// last activity): a busy machine may slow anything by seconds, and the
// figures themselves are the benchmark's (cmd/fifobench). A bound that is
// broken outright (a wait for ever, one -stop-timeout per child) still
// shows.
const busySlack = 5 * time.Second

// stopBound is how long a test lets an agent with -stop-timeout d take to
// stop: the contract's d + 1 s, and busySlack.
func stopBound(d time.Duration) time.Duration { return d + time.Second + busySlack }

// eventually polls cond every few milliseconds until it returns true or
// timeout passes, and reports whether it did.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// marker is the value of markerEnv given to every process t starts.
func marker(t *testing.T) string {
	return fmt.Sprintf("%d/%s", os.Getpid(), t.Name())
}

// checkLeaks makes sure that, when t ends, nothing t started is still
// running (no live process carries its marker) and, when countFDs is set,
// that this process has as many open descriptors and goroutines as now.
// Call it first in every test that starts processes or opens files, so that
// its check runs after every other cleanup; pass countFDs=false in parallel
// tests, whose descriptors and goroutines the run counts once, around all
// the tests (runLeaks).
func checkLeaks(t *testing.T, countFDs bool) {
	t.Helper()
	requireKnownSignals(t)
	before, beforeList, goroutines := -1, "", 0
	if countFDs {
		before, beforeList, goroutines = fdCount("self"), fdTargets("self"), runtime.NumGoroutine()
	}
	m := marker(t)
	t.Cleanup(func() {
		var left []procStat
		if !eventually(5*time.Second, func() bool { left = markedProcs(m); return len(left) == 0 }) {
			t.Errorf("processes started by the test still run after it:%s", describe(left))
			for _, p := range left {
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
		if countFDs {
			var after int
			if !eventually(2*time.Second, func() bool { after = fdCount("self"); return after == before }) {
				t.Errorf("test process has %d open descriptors after the test, %d before\nbefore:\n%safter:\n%s",
					after, before, beforeList, fdTargets("self"))
			}
			var n int
			if !eventually(2*time.Second, func() bool { n = runtime.NumGoroutine(); return n <= goroutines }) {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines after the test, %d before:\n%s", n, goroutines, buf[:runtime.Stack(buf, true)])
			}
		}
	})
}

// requireNoZombies fails t unless, within a few seconds, pid has no zombie
// children (zombies can exist for an instant between exit and reaping).
func requireNoZombies(t *testing.T, pid int) {
	t.Helper()
	var z []procStat
	if !eventually(5*time.Second, func() bool { z = zombiesOf(pid); return len(z) == 0 }) {
		t.Fatalf("%d zombie children of pid %d are not reaped:%s", len(z), pid, describe(z[:min(len(z), 10)]))
	}
}

var privileged struct {
	once sync.Once
	err  error
}

// requirePrivileged skips t (fails it when FIFOBRIDGE_REQUIRE_PRIVILEGED=1)
// unless this process can create PID namespaces with unshare(1).
func requirePrivileged(t *testing.T, why string) {
	t.Helper()
	privileged.once.Do(func() {
		if os.Geteuid() != 0 {
			privileged.err = fmt.Errorf("not root")
			return
		}
		out, err := runQuiet("unshare", "-pf", "--mount-proc", "true")
		if err != nil {
			privileged.err = fmt.Errorf("unshare -pf --mount-proc true: %v: %s", err, strings.TrimSpace(out))
		}
	})
	if privileged.err == nil {
		return
	}
	testgate.Skip(t, "%s: %v", why, privileged.err)
}

// requireOneLine fails t unless stderr holds exactly one non-empty line.
func requireOneLine(t *testing.T, what, stderr string) {
	t.Helper()
	s := strings.TrimSpace(stderr)
	if n := len(strings.Split(s, "\n")); s == "" || n != 1 {
		t.Errorf("%s wrote %d lines on stderr, want one clear line:\n%s", what, n, stderr)
	}
}
