//go:build linux

package child

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mark(t *testing.T) string {
	return strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + fmt.Sprint(time.Now().UnixNano())
}

func waitStatus(t *testing.T, p *Process) ExitStatus {
	t.Helper()
	select {
	case <-p.Done():
		return p.Status()
	case <-time.After(10 * time.Second):
		t.Fatalf("pid %d did not exit", p.Pid)
		return ExitStatus{}
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		helper string
		arg    string
		code   int
		sig    syscall.Signal
	}{
		{"exit", "0", 0, 0},
		{"exit", "1", 1, 0},
		{"exit", "42", 42, 0},
		{"exit", "255", 255, 0},
		{"kill", "KILL", 137, syscall.SIGKILL},
		{"kill", "TERM", 143, syscall.SIGTERM},
	} {
		t.Run(tc.helper+" "+tc.arg, func(t *testing.T) {
			m := mark(t)
			p, err := testReaper.Start(helperSpec(t, m, tc.helper, tc.arg))
			require.NoError(t, err)
			st := waitStatus(t, p)
			require.Equal(t, tc.code, st.Code())
			require.Equal(t, tc.sig, st.Signal())
			checkGone(t, m)
		})
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	require.NoError(t, os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644))
	for _, tc := range []struct {
		program string
		code    int
	}{
		{filepath.Join(dir, "missing"), 127},
		{"fifobridge-no-such-program", 127},
		{noexec, 126},
		{dir, 126},
	} {
		t.Run(filepath.Base(tc.program), func(t *testing.T) {
			spec := helperSpec(t, mark(t), "exit", "0")
			spec.Program = tc.program
			_, err := testReaper.Start(spec)
			var se *StartError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.code, se.Code(), "%v", err)
		})
	}
}

// TestChildGetsOnlyStdio: a child holds 0, 1 and 2 and nothing else of
// the agent's, whose descriptors are all close-on-exec (those it
// inherited, after procinit.Start).
func TestChildGetsOnlyStdio(t *testing.T) {
	// The child is not a Go program: the Go runtime opens descriptors of
	// its own, which would hide what the child inherited.
	spec := helperSpec(t, mark(t), "")
	spec.Program, spec.Args = "sleep", []string{"30"}
	p, err := testReaper.Start(spec)
	require.NoError(t, err)
	defer testReaper.Stop(p, syscall.SIGKILL, 0)
	// Start returns once exec succeeded, while the dynamic loader may
	// still hold a library open: its descriptor goes within moments, an
	// inherited one stays.
	var fds []string
	stdioOnly := func() bool {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.Pid))
		require.NoError(t, err)
		fds = fds[:0]
		for _, e := range ents {
			fds = append(fds, e.Name())
		}
		return slices.Equal(fds, []string{"0", "1", "2"})
	}
	for deadline := time.Now().Add(5 * time.Second); !stdioOnly(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child holds descriptors %v, want 0, 1 and 2", fds)
		}
	}
}

func TestStatusNeverLost(t *testing.T) {
	// Children exit at once, many at a time, together with orphans they
	// leave behind; each status must reach its own Process.
	m := mark(t)
	var procs []*Process
	for i := 0; i < 30; i++ {
		p, err := testReaper.Start(helperSpec(t, m, "orphans", "5", fmt.Sprint(i)))
		require.NoError(t, err)
		procs = append(procs, p)
	}
	for i, p := range procs {
		require.Equal(t, i, waitStatus(t, p).Code())
	}
	checkGone(t, m)
	require.NotZero(t, testReaper.Orphans(), "orphans come to the subreaper and are reaped")
}

func TestStop(t *testing.T) {
	t.Run("tree of a running child, TERM ignored, killed after the timeout", func(t *testing.T) {
		m := mark(t)
		p, err := testReaper.Start(helperSpec(t, m, "tree", "stay"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return len(marked(m)) == 4 }, 5*time.Second, 10*time.Millisecond)
		st := testReaper.Stop(p, syscall.SIGTERM, 300*time.Millisecond)
		require.Equal(t, 143, st.Code(), "the child itself dies of TERM")
		require.Empty(t, marked(m), "Stop returns only when the whole tree is gone")
		checkGone(t, m)
	})
	t.Run("what a child left behind after it exited", func(t *testing.T) {
		m := mark(t)
		p, err := testReaper.Start(helperSpec(t, m, "tree", "leave"))
		require.NoError(t, err)
		require.Equal(t, 0, waitStatus(t, p).Code())
		require.NotEmpty(t, marked(m), "sleepers outlive the child")
		st := testReaper.Stop(p, syscall.SIGTERM, 200*time.Millisecond)
		require.Equal(t, 0, st.Code())
		checkGone(t, m)
	})
	t.Run("a child that ignores TERM gets KILL", func(t *testing.T) {
		m := mark(t)
		spec := helperSpec(t, m, "ignoreterm")
		r, w, err := os.Pipe()
		require.NoError(t, err)
		defer r.Close()
		spec.Stdout = w
		p, err := testReaper.Start(spec)
		w.Close()
		require.NoError(t, err)
		line, err := bufio.NewReader(r).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "ready\n", line, "the helper ignores TERM from now on")
		st := testReaper.Stop(p, syscall.SIGTERM, 200*time.Millisecond)
		require.Equal(t, 137, st.Code())
		checkGone(t, m)
	})
}

func TestSupervisor(t *testing.T) {
	run := func(t *testing.T, policy Policy, helper, arg string, maxRestarts int) (ExitStatus, []time.Time) {
		m := mark(t)
		var starts []time.Time
		s := &Supervisor{
			Reaper: testReaper, Log: testReaper.log,
			Start: func() (*Process, error) {
				starts = append(starts, time.Now())
				return testReaper.Start(helperSpec(t, m, helper, arg))
			},
			Policy: policy, MaxRestarts: maxRestarts, Window: time.Minute,
			BackoffMin: 50 * time.Millisecond, BackoffMax: time.Second,
			StopSignal: syscall.SIGTERM, StopTimeout: time.Second,
		}
		st, err := s.Run(context.Background())
		require.NoError(t, err)
		require.Equal(t, StateStopped, s.Snapshot().State)
		require.Equal(t, len(starts), s.Snapshot().Starts)
		require.Equal(t, len(starts)-1, s.Snapshot().Restarts)
		checkGone(t, m)
		return st, starts
	}
	t.Run("on-failure gives up after max restarts with doubling backoff", func(t *testing.T) {
		st, starts := run(t, RestartOnFailure, "exit", "3", 3)
		require.Equal(t, 3, st.Code())
		require.Len(t, starts, 4)
		for i := 1; i < len(starts); i++ {
			gap := starts[i].Sub(starts[i-1])
			require.GreaterOrEqual(t, gap, 50*time.Millisecond<<(i-1), "restart %d came too early", i)
		}
	})
	t.Run("on-failure stops after success", func(t *testing.T) {
		st, starts := run(t, RestartOnFailure, "exit", "0", 3)
		require.Equal(t, 0, st.Code())
		require.Len(t, starts, 1)
	})
	t.Run("never", func(t *testing.T) {
		st, starts := run(t, RestartNever, "exit", "7", 3)
		require.Equal(t, 7, st.Code())
		require.Len(t, starts, 1)
	})
	t.Run("always restarts after success", func(t *testing.T) {
		st, starts := run(t, RestartAlways, "exit", "0", 2)
		require.Equal(t, 0, st.Code())
		require.Len(t, starts, 3)
	})
	t.Run("GiveUp ends the run with no restart", func(t *testing.T) {
		m := mark(t)
		var asked []int
		var last []bool
		s := &Supervisor{
			Reaper: testReaper, Log: testReaper.log,
			Start: func() (*Process, error) { return testReaper.Start(helperSpec(t, m, "exit", "127")) },
			GiveUp: func(_ *Process, st ExitStatus, ran time.Duration) bool {
				asked = append(asked, st.Code())
				return ran >= 0 && len(asked) == 2 // the second run, whatever the policy
			},
			Exited: func(_ *Process, l bool) { last = append(last, l) },
			Policy: RestartAlways, MaxRestarts: -1, Window: time.Minute,
			BackoffMin: time.Millisecond, BackoffMax: time.Millisecond, StopSignal: syscall.SIGTERM, StopTimeout: time.Second,
		}
		st, err := s.Run(context.Background())
		require.NoError(t, err)
		require.Equal(t, 127, st.Code())
		require.Equal(t, []int{127, 127}, asked)
		require.Equal(t, []bool{false, true}, last, "Exited is told that no restart follows")
		require.Equal(t, 1, s.Snapshot().Restarts)
		checkGone(t, m)
	})
	t.Run("stop during backoff returns the last status", func(t *testing.T) {
		m := mark(t)
		ctx, cancel := context.WithCancel(context.Background())
		s := &Supervisor{
			Reaper: testReaper, Log: testReaper.log,
			Start: func() (*Process, error) {
				return testReaper.Start(helperSpec(t, m, "exit", "9"))
			},
			// The stop comes once the child has exited: the supervisor
			// is then in its hour of backoff, or about to be.
			Exited: func(*Process, bool) { cancel() },
			Policy: RestartOnFailure, MaxRestarts: -1, Window: time.Minute,
			BackoffMin: time.Hour, BackoffMax: time.Hour, StopSignal: syscall.SIGTERM, StopTimeout: time.Second,
		}
		st, err := s.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 9, st.Code())
		checkGone(t, m)
	})
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]syscall.Signal{"TERM": syscall.SIGTERM, "sigint": syscall.SIGINT, "9": syscall.SIGKILL, "USR1": syscall.SIGUSR1} {
		got, err := ParseSignal(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "NOPE", "0", "99"} {
		_, err := ParseSignal(bad)
		require.Error(t, err, bad)
	}
}

func TestParseUser(t *testing.T) {
	// ParseUser refuses, as it should, any user but the agent's own when
	// the agent is not root, and the cases name several.
	requireRoot(t, "parsing users other than one's own")
	for in, want := range map[string][2]uint32{
		"1000:1000": {1000, 1000},
		"1000:50":   {1000, 50},
		"0":         {0, 0},
		"root":      {0, 0},
		"65534:0":   {65534, 0},
		"4242":      {4242, 4242}, // no passwd entry: gid follows uid
	} {
		c, err := ParseUser(in)
		require.NoError(t, err, in)
		require.Equal(t, want, [2]uint32{c.Uid, c.Gid}, in)
		require.NotNil(t, c.Groups, "supplementary groups are cleared")
		require.Empty(t, c.Groups)
	}
	for _, bad := range []string{"", ":", "1000:", ":1000", "no-such-user-here", "1000:no-such-group", "-1", "99999999999", "4294967295", "0:4294967295"} {
		_, err := ParseUser(bad)
		require.Error(t, err, bad)
	}
}

func TestChildRunsAsUser(t *testing.T) {
	requireRoot(t, "changing a child's user")
	cred, err := ParseUser("1000:1000")
	require.NoError(t, err)
	spec := helperSpec(t, mark(t), "")
	spec.Program, spec.Args, spec.Credential = "sleep", []string{"30"}, cred
	p, err := testReaper.Start(spec)
	require.NoError(t, err)
	defer testReaper.Stop(p, syscall.SIGKILL, 0)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid))
	require.NoError(t, err)
	require.Contains(t, string(status), "Uid:\t1000\t1000\t1000\t1000\n")
	require.Contains(t, string(status), "Gid:\t1000\t1000\t1000\t1000\n")
	for _, line := range strings.Split(string(status), "\n") {
		if groups, ok := strings.CutPrefix(line, "Groups:"); ok {
			require.Empty(t, strings.TrimSpace(groups), "supplementary groups are cleared")
		}
	}
}

func TestUserEnv(t *testing.T) {
	env := UserEnv([]string{"PATH=/bin", "HOME=/root", "USER=root", "LOGNAME=root"}, 0)
	require.Contains(t, env, "PATH=/bin")
	require.Contains(t, env, "HOME=/root")
	require.Contains(t, env, "USER=root")
	env = UserEnv([]string{"PATH=/bin", "HOME=/root", "USER=root"}, 4242)
	require.Equal(t, []string{"PATH=/bin", "HOME=/"}, env, "root's home is not kept for a uid passwd does not list")
	env = UserEnv([]string{"HOME=/home/cli", "USER=cli"}, 4242)
	require.Equal(t, []string{"HOME=/home/cli", "USER=cli"}, env, "values set on purpose are kept")
}

// Signal says when it signaled nothing: the child is gone (reaped, its
// group's id free for others), or there is none.
func TestSupervisorSignalAfterExit(t *testing.T) {
	m := mark(t)
	var s *Supervisor
	var atExit error
	s = &Supervisor{
		Reaper: testReaper, Log: testReaper.log,
		Start:  func() (*Process, error) { return testReaper.Start(helperSpec(t, m, "exit", "0")) },
		Exited: func(*Process, bool) { atExit = s.Signal(syscall.SIGUSR1) },
		Policy: RestartNever, Window: time.Minute, BackoffMin: time.Millisecond, BackoffMax: time.Millisecond,
		StopSignal: syscall.SIGTERM, StopTimeout: time.Second,
	}
	require.ErrorIs(t, s.Signal(syscall.SIGUSR1), os.ErrProcessDone, "before the first start")
	_, err := s.Run(context.Background())
	require.NoError(t, err)
	require.ErrorIs(t, atExit, os.ErrProcessDone, "once the child was reaped")
	require.ErrorIs(t, s.Signal(syscall.SIGUSR1), os.ErrProcessDone, "after the run")
	checkGone(t, m)
}
