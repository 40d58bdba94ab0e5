//go:build linux

package child

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestForkBlocksNothing: while a fork is under way (held here before the
// fork itself), another child can be signalled and its exit is reaped; the
// child being forked still gets its own status.
func TestForkBlocksNothing(t *testing.T) {
	m := mark(t)
	a, err := testReaper.Start(helperSpec(t, m, "sleep"))
	require.NoError(t, err)

	entered, release := make(chan struct{}), make(chan struct{})
	beforeFork = func() { close(entered); <-release }
	var b *Process
	var bErr error
	started := make(chan struct{})
	go func() {
		defer close(started)
		b, bErr = testReaper.Start(helperSpec(t, m, "exit", "3"))
	}()
	<-entered
	signalled := make(chan error, 1)
	go func() { signalled <- a.Signal(syscall.SIGKILL) }()
	var failed string
	select {
	case err := <-signalled:
		require.NoError(t, err)
		select {
		case <-a.Done():
		case <-time.After(10 * time.Second):
			failed = "the reaper waited for a fork before it reaped another child"
		}
	case <-time.After(10 * time.Second):
		failed = "a signal to another child waited for a fork"
	}
	close(release)
	<-started
	beforeFork = nil
	if failed != "" {
		t.Fatal(failed)
	}
	require.NoError(t, bErr)
	require.Equal(t, 137, waitStatus(t, a).Code())
	require.Equal(t, 3, waitStatus(t, b).Code(), "the child forked meanwhile keeps its own status")
	testReaper.Stop(a, syscall.SIGTERM, time.Second)
	testReaper.Stop(b, syscall.SIGTERM, time.Second)
	checkGone(t, m)
}
