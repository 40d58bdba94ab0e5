package child

import (
	"os"
	"sync"
	"syscall"
	"testing"
)

// TestCatchReserved: after CatchReserved, 32 and 34 have an action other
// than the default, and sent to the process while it forks, they do not
// end it.
func TestCatchReserved(t *testing.T) {
	if err := CatchReserved(); err != nil {
		t.Fatal(err)
	}
	for _, sig := range reserved {
		var act kernelSigaction
		if err := sigaction(sig, nil, &act); err != nil {
			t.Fatal(err)
		}
		if act.handler == sigDFL {
			t.Fatalf("signal %d is still at its default action", sig)
		}
	}
	for range 50 {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // while the spawning thread forks
			defer wg.Done()
			for i := range 16 {
				syscall.Kill(os.Getpid(), reserved[i%len(reserved)])
			}
		}()
		spec := helperSpec(t, "reserved", "exit", "0")
		spec.Env = append(spec.Env, "GORACE=atexit_sleep_ms=0") // a race build sleeps 1s at exit
		p, err := testReaper.Start(spec)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if st := p.Status(); !st.Success() {
			t.Fatalf("helper: %v", st)
		}
	}
}
