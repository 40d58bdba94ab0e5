//go:build linux

package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/client"
	"github.com/fifobridge/fifobridge/status"
)

// open's line carries the flags given and no other: -tty=false is sent
// as false, -prompt ” as an empty prompt, and nothing given leaves every
// field to the run's settings.
func TestOpenOptions(t *testing.T) {
	f, empty := false, ""
	tru := true
	for _, tc := range []struct {
		args []string
		want client.OpenOptions
		err  string
	}{
		{nil, client.OpenOptions{}, ""},
		{[]string{"-tty=false"}, client.OpenOptions{Tty: &f}, ""},
		{[]string{"-tty"}, client.OpenOptions{Tty: &tru}, ""},
		{[]string{"-prompt", "", "-continuation", ""}, client.OpenOptions{Prompt: &empty, Continuation: &empty}, ""},
		{[]string{"-reuse", "-size", "100x30", "-arg", "-i", "-arg", "x y", "-env", "A=1", "-env", "B=", "-cwd", "/src", "-timeout", "5s"},
			client.OpenOptions{Reuse: true, Size: "100x30", Args: []string{"-i", "x y"}, Env: []string{"A=1", "B="}, Cwd: "/src", Limit: 5 * time.Second}, ""},
		{[]string{"-user", "nobody"}, client.OpenOptions{User: "nobody"}, ""},
		{[]string{"-env", "NOEQUALS"}, client.OpenOptions{}, `invalid -env "NOEQUALS": want K=V`},
		{[]string{"-env", "=v"}, client.OpenOptions{}, `invalid -env "=v": want K=V`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := newOpenFlags()
			require.NoError(t, o.fs.Parse(append(tc.args, "sh1")))
			got, err := o.options()
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, []string{"sh1"}, o.fs.Args())
		})
	}
}

// What follows NAME is nothing, or -- and the session's own PROGRAM and
// its arguments, word for word (a second -- among them included).
func TestOpenCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		err  string
	}{
		{[]string{"sh1"}, nil, ""},
		{[]string{"-tty", "--", "sh1"}, nil, ""},
		{[]string{"sh1", "--", "bash", "--norc", "-i"}, []string{"bash", "--norc", "-i"}, ""},
		{[]string{"-tty", "--", "sh1", "--", "sh", "-c", "echo $1", "sh", "--", "a b"}, []string{"sh", "-c", "echo $1", "sh", "--", "a b"}, ""},
		{[]string{"sh1", "sh2"}, nil, "want one NAME, then nothing or -- PROGRAM [ARG...]"},
		{[]string{"sh1", "--"}, nil, "want PROGRAM after --"},
		{[]string{"sh1", "--", ""}, nil, "want PROGRAM after --"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := newOpenFlags()
			require.NoError(t, o.fs.Parse(tc.args))
			got, err := o.command()
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// open's exit codes: 0, 124 when no prompt came in time (saying the
// session stays open and how to close it), 126 and 127 when PROGRAM
// cannot start, 125 for a refused open or a bridge error, 124 past its
// own -timeout and 128+N on a signal.
func TestOpenExit(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	signalled, cancelSig := context.WithCancelCause(context.Background())
	cancelSig(&interrupted{sig: syscall.SIGTERM})
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		code int
	}{
		{"opened", context.Background(), nil, 0},
		{"no prompt", context.Background(), &client.RejectedError{Msg: "no prompt within 30s", TimedOut: true}, 124},
		{"not found", context.Background(), &client.RejectedError{Msg: "x: not found", Code: 127}, 127},
		{"not executable", context.Background(), &client.RejectedError{Msg: "x: permission denied", Code: 126}, 126},
		{"refused", context.Background(), &client.RejectedError{Msg: "session sh1 is open already"}, 125},
		{"not sessions mode", context.Background(), fmt.Errorf("%w: in exec mode", client.ErrNotSessions), 125},
		{"no agent", context.Background(), client.ErrNoAgent, 125},
		{"own timeout", expired, context.DeadlineExceeded, 124},
		{"TERM", signalled, context.Canceled, 128 + 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.code, openExit(tc.ctx, "sh1", tc.err, time.Second))
		})
	}
}

// close's exit code: 0 when every session closed, 125 when any was not
// open (or failed), 124 past its -timeout, 128+N on a signal.
func TestCloseExit(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	signalled, cancelSig := context.WithCancelCause(context.Background())
	cancelSig(&interrupted{sig: syscall.SIGINT})
	notOpen := &client.RejectedError{Msg: "session b is not open"}
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		closed []client.Closed
		code   int
	}{
		{"all closed", context.Background(), []client.Closed{{Name: "a"}, {Name: "b", Code: 130}}, 0},
		{"one not open", context.Background(), []client.Closed{{Name: "a"}, {Name: "b", Err: notOpen}}, 125},
		{"no agent", context.Background(), []client.Closed{{Name: "a", Err: client.ErrNoAgent}}, 125},
		{"own timeout", expired, []client.Closed{{Name: "a"}, {Name: "b", Err: context.DeadlineExceeded}}, 124},
		{"INT", signalled, []client.Closed{{Name: "a", Err: context.Canceled}}, 128 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.code, closeExit(tc.ctx, tc.closed, time.Second))
		})
	}
}

// ls prints one line per session, by name, in columns NAME PID STATE
// AGE RESTARTS TURN, TURN "-" without a prompt, and no header.
func TestFormatSessions(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got := formatSessions([]status.Session{
		{Name: "sh1", PID: 12, State: "running", StartedAt: now.Add(-90 * time.Second), Restarts: 0, Turn: &status.Turn{State: "ready"}},
		{Name: "py", PID: 1234, State: "backoff", StartedAt: now.Add(-3 * time.Hour), Restarts: 2},
	}, now)
	require.Equal(t, "py   1234  backoff  3h0m   2  -\nsh1  12    running  1m30s  0  ready\n", got)
	require.Empty(t, formatSessions(nil, now))
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 1500 * time.Millisecond: "1s", 59 * time.Second: "59s", 62 * time.Second: "1m2s",
		2*time.Hour + 5*time.Minute: "2h5m", 50 * time.Hour: "2d2h",
	} {
		require.Equal(t, want, age(d), "age(%s)", d)
	}
}

// The usage names every host command of sessions.
func TestUsageNamesSessions(t *testing.T) {
	for _, cmd := range []string{"open", "close", "ls"} {
		require.Contains(t, usage, "fifobridge "+cmd+" ")
	}
}
