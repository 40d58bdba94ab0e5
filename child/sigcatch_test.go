package child

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCatch: Catch registers the signals, and every thread, also one made
// while it ran, has the process's affinity again afterwards.
func TestCatch(t *testing.T) {
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		t.Fatal(err)
	}
	if orig.Count() < 2 {
		t.Skip("one CPU: nothing is pinned")
	}
	c := make(chan os.Signal, 4)
	Catch(c, syscall.SIGUSR1, syscall.SIGWINCH)
	defer signal.Stop(c)
	for _, tid := range threads() {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err != nil {
			continue // gone
		}
		if set != orig {
			t.Errorf("thread %d: affinity %v, want %v", tid, set, orig)
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	select {
	case sig := <-c:
		if sig != syscall.SIGUSR1 {
			t.Fatalf("got %v", sig)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SIGUSR1 not caught")
	}
}
