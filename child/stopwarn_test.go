//go:build linux

package child

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStopWarnsIgnored: a child still there ignoreMark after its stop
// signal, in a stop that waits longer than that for SIGKILL, gets one
// warning that names the signal and -stop-signal; a child that acts on
// its signal, or a stop that kills it by the mark, gets none.
func TestStopWarnsIgnored(t *testing.T) {
	patient := ignoreMark + time.Second
	t.Run("ignores TERM", func(t *testing.T) {
		m := mark(t)
		p := startIgnoringTerm(t, helperSpec(t, m, "ignoreterm"))
		st := testReaper.Stop(p, syscall.SIGTERM, patient)
		require.Equal(t, 137, st.Code(), "SIGKILL ended it")
		requireIgnoreWarnings(t, p, 1)
		checkGone(t, m)
	})
	t.Run("acts on TERM", func(t *testing.T) {
		m := mark(t)
		p, err := testReaper.Start(helperSpec(t, m, "sleep"))
		require.NoError(t, err)
		st := testReaper.Stop(p, syscall.SIGTERM, patient)
		require.Equal(t, 143, st.Code(), "TERM ended it")
		requireIgnoreWarnings(t, p, 0)
		checkGone(t, m)
	})
	t.Run("killed by the mark", func(t *testing.T) {
		m := mark(t)
		p := startIgnoringTerm(t, helperSpec(t, m, "ignoreterm"))
		st := testReaper.Stop(p, syscall.SIGTERM, ignoreMark)
		require.Equal(t, 137, st.Code(), "SIGKILL ended it")
		requireIgnoreWarnings(t, p, 0)
		checkGone(t, m)
	})
	t.Run("asked, awaited, then stopped", func(t *testing.T) {
		m := mark(t)
		p := startIgnoringTerm(t, helperSpec(t, m, "ignoreterm"))
		testReaper.AskToStop(p, syscall.SIGTERM)
		require.False(t, testReaper.AwaitAsked(p, time.Now().Add(patient)), "it ignores TERM")
		requireIgnoreWarnings(t, p, 1)
		testReaper.Stop(p, syscall.SIGTERM, patient) // the same stop: no second warning
		requireIgnoreWarnings(t, p, 1)
		checkGone(t, m)
	})
	t.Run("in a cgroup", func(t *testing.T) {
		cgroups, _ := openTestCgroups(t)
		m := mark(t)
		spec := helperSpec(t, m, "ignoreterm")
		spec.Cgroups = cgroups
		p := startIgnoringTerm(t, spec)
		st, killed := testReaper.StopKilled(p, syscall.SIGTERM, patient)
		require.True(t, killed)
		require.Equal(t, 137, st.Code(), "SIGKILL ended it")
		requireIgnoreWarnings(t, p, 1)
		checkGone(t, m)
	})
}

// startIgnoringTerm starts spec, a helper that ignores TERM, and returns
// once it does.
func startIgnoringTerm(t *testing.T, spec Spec) *Process {
	t.Helper()
	p, err := testReaper.Start(spec)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return ignoringTerm([]int{p.Pid}) == 1 }, 20*time.Second, 10*time.Millisecond,
		"the helper did not come to ignore TERM")
	return p
}

// requireIgnoreWarnings requires want warnings about p ignoring its stop
// signal in testLogs, each naming TERM and -stop-signal.
func requireIgnoreWarnings(t *testing.T, p *Process, want int) {
	t.Helper()
	var got []string
	for _, line := range strings.Split(testLogs.String(), "\n") {
		if strings.Contains(line, fmt.Sprintf(" pid=%d ", p.Pid)) && strings.Contains(line, "stop signal") {
			got = append(got, line)
		}
	}
	require.Len(t, got, want, "warnings about pid %d ignoring its stop signal", p.Pid)
	for _, line := range got {
		require.Contains(t, line, "level=WARN")
		require.Contains(t, line, "signal=TERM")
		require.Contains(t, line, "-stop-signal")
	}
}
