package fifo

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// checkLeaks records the open descriptors and goroutines now and fails the
// test if, when it ends, more are left (goroutines get a moment to exit).
func checkLeaks(t *testing.T) {
	t.Helper()
	fds, gs := countFDs(t), runtime.NumGoroutine()
	t.Cleanup(func() {
		if n := countFDs(t); n != fds {
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

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("list fds: %v", err)
	}
	return len(ents) - 1
}
