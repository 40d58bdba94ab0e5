//go:build linux

package fifo

import (
	"runtime"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
)

// checkLeaks records the open descriptors and goroutines now and fails the
// test if, when it ends, more are left (goroutines get a moment to exit).
func checkLeaks(t *testing.T) {
	t.Helper()
	fds, gs := leakcheck.FDs(t), runtime.NumGoroutine()
	t.Cleanup(func() {
		if n := leakcheck.FDs(t); n != fds {
			t.Errorf("descriptors: %d before, %d after", fds, n)
		}
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > gs && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > gs {
			buf := make([]byte, 1<<16)
			t.Errorf("goroutines: %d before, %d after\n%s", gs, n, buf[:runtime.Stack(buf, true)])
		}
	})
}
