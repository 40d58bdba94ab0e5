//go:build linux

package client

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
)

// controlCall is a call of Open, Close or List on its own goroutine,
// which the test waits for.
type controlCall[R any] struct {
	res  R
	err  error
	done chan struct{}
}

func startControl[R any](t *testing.T, f func() (R, error)) *controlCall[R] {
	t.Helper()
	c := &controlCall[R]{done: make(chan struct{})}
	go func() { defer close(c.done); c.res, c.err = f() }()
	t.Cleanup(func() { <-c.done })
	return c
}

func (c *controlCall[R]) wait(t *testing.T) (R, error) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return")
	}
	return c.res, c.err
}

// TestOpenLine: an open's line carries the options given, and only
// those, so that the run's settings hold for the rest: a terminal turned
// off is sent as "tty":false, a prompt given empty as "prompt":"".
func TestOpenLine(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	s := Sessions{Dir: f.dir}
	off, empty := false, ""
	for _, tc := range []struct {
		name string
		o    OpenOptions
		want string // the line's fields after "reply"
	}{
		{"nothing given", OpenOptions{}, `"op":"open","session":"sh1"`},
		{"tty false", OpenOptions{Tty: &off}, `"op":"open","session":"sh1","tty":false`},
		{"everything", OpenOptions{Reuse: true, Size: "100x30", Prompt: &empty, Continuation: &empty,
			Args: []string{"-i", "x y"}, Env: []string{"A=1"}, Cwd: "/src", Limit: 5 * time.Second},
			`"op":"open","session":"sh1","reuse":true,"size":"100x30","prompt":"","continuation":"","args":["-i","x y"],"env":["A=1"],"cwd":"/src","timeout":"5s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := startControl(t, func() (Opened, error) { return s.Open(context.Background(), "sh1", tc.o) })
			c := f.next()
			raw, err := json.Marshal(c.Control)
			require.NoError(t, err)
			require.Equal(t, `{"id":"`+c.ID+`","reply":"`+c.Reply+`",`+tc.want+`}`, string(raw))
			f.answer(c, protocol.AppendOpened(nil, c.ID, 42, false))
			got, err := call.wait(t)
			require.NoError(t, err)
			require.Equal(t, Opened{PID: 42}, got)
		})
	}
	requireNoReplies(t, f.dir)
}

// TestOpenAnswers: every answer an open can get, as Open returns it.
func TestOpenAnswers(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	s := Sessions{Dir: f.dir}
	for _, tc := range []struct {
		name   string
		answer func(id string) []byte
		want   Opened
		err    *RejectedError
	}{
		{"opened", func(id string) []byte { return protocol.AppendOpened(nil, id, 7, false) }, Opened{PID: 7}, nil},
		{"reused", func(id string) []byte { return protocol.AppendOpened(nil, id, 7, true) }, Opened{PID: 7, Reused: true}, nil},
		{"open already", func(id string) []byte { return protocol.AppendError(nil, id, "session sh1 is open already") },
			Opened{}, &RejectedError{Msg: "session sh1 is open already"}},
		{"not found", func(id string) []byte { return protocol.AppendOpenError(nil, id, "start: no such file", 127, false) },
			Opened{}, &RejectedError{Msg: "start: no such file", Code: 127}},
		{"not executable", func(id string) []byte {
			return protocol.AppendOpenError(nil, id, "start: permission denied", 126, false)
		},
			Opened{}, &RejectedError{Msg: "start: permission denied", Code: 126}},
		{"no prompt in time", func(id string) []byte { return protocol.AppendOpenError(nil, id, "no prompt within 1s", 0, true) },
			Opened{}, &RejectedError{Msg: "no prompt within 1s", TimedOut: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := startControl(t, func() (Opened, error) { return s.Open(context.Background(), "sh1", OpenOptions{}) })
			c := f.next()
			f.answer(c, tc.answer(c.ID))
			got, err := call.wait(t)
			if tc.err == nil {
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
				return
			}
			var rej *RejectedError
			require.ErrorAs(t, err, &rej)
			require.Equal(t, tc.err, rej)
		})
	}
	requireNoReplies(t, f.dir)
}

// TestOpenUnexpectedFrame: a frame that answers no open (a close's) is
// an error, not a success.
func TestOpenUnexpectedFrame(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	call := startControl(t, func() (Opened, error) { return Sessions{Dir: f.dir}.Open(context.Background(), "sh1", OpenOptions{}) })
	c := f.next()
	f.answer(c, protocol.AppendClosed(nil, c.ID, 0))
	_, err := call.wait(t)
	require.ErrorContains(t, err, `did not answer with a "opened" frame`)
	requireNoReplies(t, f.dir)
}

// TestCloseSeveral: the closes of several sessions are under way at
// once, each its own line; one that was not open fails alone, and the
// results come in the order of the names.
func TestCloseSeveral(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	names := []string{"a", "b", "c"}
	call := startControl(t, func() ([]Closed, error) {
		return Sessions{Dir: f.dir}.Close(context.Background(), names...), nil
	})
	lines := map[string]protocol.ParsedControl{}
	for range names { // all three wait at once: none is answered yet
		c := f.next()
		require.Equal(t, protocol.OpClose, c.Op)
		lines[c.Session] = c
	}
	require.Len(t, lines, 3)
	f.answer(lines["b"], protocol.AppendError(nil, lines["b"].ID, "session b is not open"))
	f.answer(lines["c"], protocol.AppendClosed(nil, lines["c"].ID, 130))
	f.answer(lines["a"], protocol.AppendClosed(nil, lines["a"].ID, 0))
	got, _ := call.wait(t)
	require.Len(t, got, 3)
	require.Equal(t, Closed{Name: "a"}, got[0])
	require.Equal(t, "b", got[1].Name)
	require.Equal(t, &RejectedError{Msg: "session b is not open"}, got[1].Err)
	require.Equal(t, Closed{Name: "c", Code: 130}, got[2])
	requireNoReplies(t, f.dir)
}

// TestCloseCancelled: a close whose context ends (a signal, close's
// -timeout) returns at once with the context's error and leaves no reply
// FIFO.
func TestCloseCancelled(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	ctx, cancel := context.WithCancel(context.Background())
	call := startControl(t, func() ([]Closed, error) { return Sessions{Dir: f.dir}.Close(ctx, "a"), nil })
	f.next()
	cancel()
	got, _ := call.wait(t)
	require.ErrorIs(t, got[0].Err, context.Canceled)
	requireNoReplies(t, f.dir)
}

// TestList: a list returns what ls shows of each session and the
// sessions as the agent wrote them; none open is an empty array.
func TestList(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	s := Sessions{Dir: f.dir}
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		raw  string
		want []status.Brief
	}{
		{"none", ``, nil},
		{"two", `[{"name":"sh1","pid":12,"state":"running","started_at":"2026-01-02T03:04:05Z","restarts":1,"tty":true,"child":{"pid":12,"starts":2,"restarts":1,"recent_restarts":0,"quick_exits":0,"crash_loop":false,"last_exit":null},"turn":{"state":"busy","queued":2,"answered":3,"timed_out":0,"incomplete":0}},` +
			`{"name":"py","pid":13,"state":"running","started_at":"2026-01-02T03:04:05Z","restarts":0,"tty":false,"child":{"pid":13,"starts":1,"restarts":0,"recent_restarts":0,"quick_exits":0,"crash_loop":false,"last_exit":null}}]`,
			[]status.Brief{
				{Name: "sh1", PID: 12, State: "running", StartedAt: started, Restarts: 1, Turn: "busy"},
				{Name: "py", PID: 13, State: "running", StartedAt: started},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := startControl(t, func() ([]status.Brief, error) {
				list, raw, err := s.List(context.Background())
				if err == nil {
					wantRaw := tc.raw
					if wantRaw == "" {
						wantRaw = "[]"
					}
					require.JSONEq(t, wantRaw, string(raw))
				}
				return list, err
			})
			c := f.next()
			require.Equal(t, protocol.OpList, c.Op)
			require.Empty(t, c.Session)
			f.answer(c, protocol.AppendSessions(nil, c.ID, json.RawMessage(tc.raw)))
			got, err := call.wait(t)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	requireNoReplies(t, f.dir)
}

// TestControlRefused: a control line is written only to a live agent in
// sessions mode, whose status file names the FIFO opened as its "in";
// else the call fails at once and nothing reaches DIR/in.
func TestControlRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fakeSessions)
		want  error
		msg   string
	}{
		{"exec mode", func(f *fakeSessions) { f.mode = "exec"; f.writeStatus() }, ErrNotSessions,
			"is in exec mode: open needs an agent run with -mode sessions"},
		{"stream mode", func(f *fakeSessions) { f.mode = "stream"; f.writeStatus() }, ErrNotSessions, "is in stream mode"},
		{"no status file", func(f *fakeSessions) { require.NoError(t, os.Remove(filepath.Join(f.dir, statusName))) }, ErrNoAgent, "has no status file"},
		{"agent dead", func(f *fakeSessions) { f.die() }, ErrNoAgent, "no agent serves"},
		{"another FIFO served as in", func(f *fakeSessions) {
			other := filepath.Join(f.dir, "other")
			require.NoError(t, unix.Mkfifo(other, 0o600))
			f.sessions = nil
			f.writeStatus()
			st, err := status.Read(filepath.Join(f.dir, statusName))
			require.NoError(t, err)
			st.Inputs[inName] = fifoID(t, other)
			writeStatusFile(t, f.dir, st)
		}, errNotServed, "is not the FIFO the agent serves as in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			f := startFakeSessions(t)
			tc.setup(f)
			_, err := Sessions{Dir: f.dir}.Open(context.Background(), "sh1", OpenOptions{})
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.msg)
			f.requireNothingRead()
			requireNoReplies(t, f.dir)
		})
	}
}

// TestControlNoDir: a DIR that does not exist is no agent.
func TestControlNoDir(t *testing.T) {
	checkLeaks(t)
	_, _, err := Sessions{Dir: filepath.Join(t.TempDir(), "none")}.List(context.Background())
	require.ErrorIs(t, err, ErrNoAgent)
}

// writeStatusFile writes s as DIR's status file.
func writeStatusFile(t *testing.T, dir string, s status.Status) {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	tmp := filepath.Join(dir, "status.tmp")
	require.NoError(t, os.WriteFile(tmp, b, 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, statusName)))
}

// TestControlBadName: a name that could name no session (one that
// reaches outside DIR/sessions, a hidden one, one too long, none) is
// refused before anything is written.
func TestControlBadName(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	s := Sessions{Dir: f.dir}
	for _, name := range []string{"../x", ".hid", "a/b", strings.Repeat("x", 65), "", "."} {
		_, err := s.Open(context.Background(), name, OpenOptions{})
		require.ErrorContains(t, err, "invalid session name", "open %q", name)
		closed := s.Close(context.Background(), name)
		require.ErrorContains(t, closed[0].Err, "invalid session name", "close %q", name)
	}
	f.requireNothingRead()
	long := strings.Repeat("x", 64)
	call := startControl(t, func() (Opened, error) { return s.Open(context.Background(), long, OpenOptions{}) })
	c := f.next()
	require.Equal(t, long, c.Session)
	f.answer(c, protocol.AppendOpened(nil, c.ID, 1, false))
	_, err := call.wait(t)
	require.NoError(t, err)
	requireNoReplies(t, f.dir)
}
