package watch

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunner: kicks while a run is under way make one more run after it,
// not one each; once the runs are over no goroutine is left; Stop waits
// for the run under way and makes later kicks do nothing.
func TestRunner(t *testing.T) {
	var runs atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	r := NewRunner(func() {
		runs.Add(1)
		started <- struct{}{}
		<-release
	})
	r.Kick()
	<-started
	for range 5 {
		r.Kick()
	}
	release <- struct{}{} // the first run ends; one more follows
	<-started
	release <- struct{}{}
	r.mu.Lock()
	for r.running { // the second run's goroutine ends
		r.mu.Unlock()
		time.Sleep(time.Millisecond)
		r.mu.Lock()
	}
	r.mu.Unlock()
	require.EqualValues(t, 2, runs.Load(), "runs for six kicks, five of them during the first run")

	r.Kick()
	<-started
	stopped := make(chan struct{})
	go func() { r.Stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while a run was under way")
	case <-time.After(20 * time.Millisecond):
	}
	release <- struct{}{}
	<-stopped
	r.Kick()
	require.EqualValues(t, 3, runs.Load(), "a run after Stop")
}
