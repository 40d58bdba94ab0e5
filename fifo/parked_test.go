//go:build linux

package fifo

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// waitParked returns once a goroutine whose stack holds fn is parked in
// state, as runtime.Stack names it ("select", "IO wait"): the goroutine
// under test has reached the wait the test is about. It polls the stacks;
// no amount of time stands in for the wait itself.
func waitParked(t *testing.T, state, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			head, _, _ := strings.Cut(g, "\n")
			if strings.Contains(head, "["+state) && strings.Contains(g, fn) {
				return
			}
		}
	}
	t.Fatalf("no goroutine in %s parked in %s", fn, state)
}
