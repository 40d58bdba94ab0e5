//go:build linux

package child

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCrashLoopRule drives the crash-loop rule on a fake clock: in from
// the third run in a row that ended within the window, through backoffs
// of any length, until the current child has run 10 s (or a whole
// window when that is shorter).
func TestCrashLoopRule(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at   time.Duration // since t0
		what string        // "start", "exit" or "check"
		in   bool          // for "check": in a crash loop
	}
	// dies runs a child that starts at start and lives for ran.
	dies := func(start, ran time.Duration) []step {
		return []step{{at: start, what: "start"}, {at: start + ran, what: "exit"}}
	}
	check := func(at time.Duration, in bool) step { return step{at: at, what: "check", in: in} }
	cat := func(parts ...[]step) []step {
		var all []step
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	for _, tc := range []struct {
		name   string
		window time.Duration
		steps  []step
	}{
		{"two quick runs are no loop", time.Minute, cat(
			dies(0, time.Second), dies(2*time.Second, time.Second),
			[]step{check(3*time.Second, false)})},
		{"the third quick run starts it, through the backoff", time.Minute, cat(
			dies(0, time.Second), dies(2*time.Second, time.Second), dies(4*time.Second, time.Second),
			[]step{check(5*time.Second, true), check(time.Hour, true)})},
		// The backoff at its cap of 30 s is far above a 1 s window: the
		// old rule, restarts inside the window, saw none.
		{"a backoff longer than the window", time.Second, cat(
			dies(0, 10*time.Millisecond), dies(time.Minute, 10*time.Millisecond), dies(2*time.Minute, 10*time.Millisecond),
			[]step{check(2*time.Minute+30*time.Second, true)},
			dies(3*time.Minute, 10*time.Millisecond),
			[]step{check(3*time.Minute+29*time.Second, true)})},
		{"a child that runs 10 s leaves it", time.Minute, cat(
			dies(0, time.Second), dies(2*time.Second, time.Second), dies(4*time.Second, time.Second),
			[]step{{at: 6 * time.Second, what: "start"},
				check(6*time.Second, true), check(16*time.Second-time.Millisecond, true), check(16*time.Second, false),
				check(time.Hour, false)})},
		{"and is back in it when it dies within the window", time.Minute, cat(
			dies(0, time.Second), dies(2*time.Second, time.Second), dies(4*time.Second, time.Second),
			dies(6*time.Second, 20*time.Second),
			[]step{check(27*time.Second, true)})},
		{"a window shorter than 10 s is enough to leave it", 2 * time.Second, cat(
			dies(0, time.Second), dies(2*time.Second, time.Second), dies(4*time.Second, time.Second),
			[]step{{at: 6 * time.Second, what: "start"}, check(7*time.Second, true), check(8*time.Second, false)})},
		{"a run of a whole window ends the count", 5 * time.Second, cat(
			dies(0, time.Second), dies(2*time.Second, time.Second), dies(4*time.Second, 5*time.Second),
			dies(10*time.Second, time.Second), dies(12*time.Second, time.Second),
			[]step{check(14*time.Second, false)},
			dies(14*time.Second, time.Second),
			[]step{check(16*time.Second, true)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := crashLoop{window: tc.window}
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				switch s.what {
				case "start":
					c.start(now)
				case "exit":
					c.exit(now)
				case "check":
					require.Equal(t, s.in, c.in(now), "step %d: check at %v (quick runs %d)", i, s.at, c.quick)
					if left := c.leavesIn(now); !c.started.IsZero() && c.in(now) {
						require.Equal(t, c.settle()-now.Sub(c.started), left, "step %d: leavesIn", i)
					} else {
						require.Zero(t, left, "step %d: leavesIn out of a loop or between runs", i)
					}
				}
			}
		})
	}
}

// TestSupervisorCrashLoop: the Snapshot says crash loop from the third
// quick exit, and a child that then keeps running leaves it with a call
// of Changed once it has run a whole (short) window, without anything
// else changing.
func TestSupervisorCrashLoop(t *testing.T) {
	m := mark(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const window = 300 * time.Millisecond
	starts := 0
	changed := make(chan Snapshot, 100)
	var s *Supervisor
	s = &Supervisor{
		Reaper: testReaper, Log: testReaper.log,
		Start: func() (*Process, error) {
			starts++
			if starts <= 3 {
				return testReaper.Start(helperSpec(t, m, "exit", "3"))
			}
			return testReaper.Start(helperSpec(t, m, "sleep"))
		},
		Changed: func() { changed <- s.Snapshot() },
		Policy:  RestartOnFailure, MaxRestarts: -1, Window: window,
		BackoffMin: time.Millisecond, BackoffMax: time.Millisecond,
		StopSignal: syscall.SIGTERM, StopTimeout: time.Second,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	var snap Snapshot
	next := func() Snapshot {
		t.Helper()
		select {
		case snap = <-changed:
			return snap
		case <-time.After(10 * time.Second):
			t.Fatalf("no change after %+v", snap)
			return snap
		}
	}
	for snap = next(); !(snap.Starts == 3 && snap.Pid == 0 && snap.LastExit != nil); snap = next() {
		require.False(t, snap.CrashLoop, "before the third exit: %+v", snap)
	}
	require.True(t, snap.CrashLoop, "after the third quick exit")
	require.Equal(t, 3, snap.QuickExits)
	for snap = next(); snap.Starts < 4 || snap.State != StateRunning; snap = next() {
		require.True(t, snap.CrashLoop, "in backoff after the third quick exit: %+v", snap)
	}
	require.True(t, snap.CrashLoop, "the fourth child has just started")
	// The next change is the fourth child leaving the loop.
	snap = next()
	require.False(t, snap.CrashLoop, "the fourth child ran a whole window: %+v", snap)
	require.Equal(t, StateRunning, snap.State)
	require.Equal(t, 4, snap.Starts)
	cancel()
	<-done
	checkGone(t, m)
}
