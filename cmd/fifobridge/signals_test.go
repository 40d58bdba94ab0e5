//go:build linux

package main

import (
	"os/signal"
	"runtime"
	"testing"

	"github.com/fifobridge/fifobridge/internal/testgate"
	"golang.org/x/sys/unix"
)

// Registering the agent's signals leaves every thread's CPU affinity as it
// was: a thread bound to one CPU meanwhile would bind whatever it forks,
// and throttles every goroutine that lands on it. A thread of its own
// reads its affinity over and over while the signals are registered,
// rounds times: it does not run at every moment, so one round may miss a
// short binding.
func TestCatchSignalsLeavesAffinityAlone(t *testing.T) {
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		t.Fatal(err)
	}
	if orig.Count() < 2 {
		testgate.Skip(t, "one CPU: a thread bound to one would not show")
	}
	started, stop, least := make(chan struct{}), make(chan struct{}), make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		n := orig.Count()
		for i := 0; ; i++ {
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(0, &set); err == nil {
				n = min(n, set.Count())
			}
			if i == 0 {
				close(started)
			}
			select {
			case <-stop:
				least <- n
				return
			default:
			}
		}
	}()
	<-started
	const rounds = 50
	for range rounds {
		signal.Stop(catchSignals())
	}
	close(stop)
	if n := <-least; n != orig.Count() {
		t.Fatalf("a thread was bound to %d of %d CPUs while the signals were registered", n, orig.Count())
	}
}
