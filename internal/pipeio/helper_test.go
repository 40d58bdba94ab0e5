//go:build linux

package pipeio

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// pipe is a pipe whose ends are non-blocking (in the runtime's poller), as
// the agent makes them; both ends are closed when the test ends.
type pipe struct{ r, w *os.File }

func newPipe(t testing.TB) pipe {
	t.Helper()
	var fds [2]int
	require.NoError(t, unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK))
	p := pipe{os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")}
	t.Cleanup(func() { p.r.Close(); p.w.Close() })
	return p
}

// setWindow sets the busy-poll window for one test and restores it after.
func setWindow(t *testing.T, d time.Duration) {
	t.Helper()
	was := window.Load()
	window.Store(int64(d))
	t.Cleanup(func() { window.Store(was) })
}

// setProcs sets GOMAXPROCS for one test and restores it after.
func setProcs(t *testing.T, n int) {
	t.Helper()
	was := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
}

// checkLeaks fails the test if, when it ends (after its other cleanups),
// more descriptors or goroutines are left than when it began (goroutines
// get a moment to end).
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
