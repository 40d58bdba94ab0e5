//go:build linux

package status

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/sharedir"
)

// TestStatusFileJSON pins the status file's field names, order and shapes
// (docs/status.md), with every optional field present and with none.
func TestStatusFileJSON(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC)
	full := Status{PID: 1, Mode: "stream", State: "running", StartedAt: at, UpdatedAt: at.Add(time.Second),
		In: "/run/fifobridge/in", Out: "/run/fifobridge/out", Inputs: map[string]FIFO{"in": {Dev: 66, Ino: 1201}, "ask": {Dev: 66, Ino: 1202}},
		Containment: "cgroup", FDs: 9, Goroutines: 12,
		Child: ChildStatus{PID: 12, Starts: 2, Restarts: 1, RecentRestarts: 1, RestartWindow: "1m0s",
			QuickExits: 3, CrashLoop: true, LastExit: &LastExit{Code: 143, Signal: "TERM", At: at}, TTY: &TTY{Cols: 80, Rows: 24}},
		Requests: Requests{Accepted: 5, Rejected: 1, Active: 2, Completed: 3},
		Tee:      &Tee{Written: 100, Dropped: 7}}
	bare := Status{PID: 1, Mode: "exec", State: "starting", StartedAt: at, UpdatedAt: at, In: "/d/in", Out: "/d/out"}
	for name, tc := range map[string]struct {
		s    Status
		want string
	}{
		"every field": {full, `{"pid":1,"mode":"stream","state":"running","started_at":"2025-03-04T05:06:07.89Z",` +
			`"updated_at":"2025-03-04T05:06:08.89Z","in":"/run/fifobridge/in","out":"/run/fifobridge/out",` +
			`"inputs":{"ask":{"dev":66,"ino":1202},"in":{"dev":66,"ino":1201}},` +
			`"containment":"cgroup","fds":9,"goroutines":12,` +
			`"child":{"pid":12,"starts":2,"restarts":1,"recent_restarts":1,"restart_window":"1m0s",` +
			`"quick_exits":3,"crash_loop":true,"last_exit":{"code":143,"signal":"TERM","at":"2025-03-04T05:06:07.89Z"},"tty":{"cols":80,"rows":24}},` +
			`"requests":{"accepted":5,"rejected":1,"active":2,"completed":3},"tee":{"written":100,"dropped":7}}` + "\n"},
		"no optional field": {bare, `{"pid":1,"mode":"exec","state":"starting","started_at":"2025-03-04T05:06:07.89Z",` +
			`"updated_at":"2025-03-04T05:06:07.89Z","in":"/d/in","out":"/d/out","fds":0,"goroutines":0,` +
			`"child":{"pid":0,"starts":0,"restarts":0,"recent_restarts":0,"quick_exits":0,"crash_loop":false,"last_exit":null},` +
			`"requests":{"accepted":0,"rejected":0,"active":0,"completed":0}}` + "\n"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "status.json")
			writeFile(t, path, tc.s)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
			back, err := Read(path)
			require.NoError(t, err)
			require.Equal(t, tc.s, back)
		})
	}
}

// TestReadOwnedAt: a status file counts as the agent's only when it
// belongs to the agent's user and nobody else may write it; it is read
// with its input FIFOs.
func TestReadOwnedAt(t *testing.T) {
	me := os.Geteuid()
	dir := t.TempDir()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	want := Status{PID: 7, Mode: "stream", Inputs: map[string]FIFO{"in": {Dev: 1, Ino: 2}, "ask": {Dev: 1, Ino: 3}}}
	for _, tc := range []struct {
		mode  os.FileMode
		owner int
		ok    bool
	}{
		{0o640, me, true},
		{0o644, me, true},
		{0o600, me, true},
		{0o660, me, false},
		{0o646, me, false},
		{0o640, me + 1, false},
	} {
		require.NoError(t, WriteAt(d, "status.json", want, tc.mode))
		require.NoError(t, os.Lchown(filepath.Join(dir, "status.json"), tc.owner, -1))
		s, err := ReadOwnedAt(d, "status.json", uint32(me))
		if !tc.ok {
			require.ErrorContains(t, err, "not to the agent's user", "mode %04o owner %d", tc.mode, tc.owner)
			continue
		}
		require.NoError(t, err, "mode %04o owner %d", tc.mode, tc.owner)
		require.Equal(t, want.Inputs, s.Inputs)
	}
	require.NoError(t, os.Remove(filepath.Join(dir, "status.json")))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, "status.json"), 0o600))
	_, err = ReadOwnedAt(d, "status.json", uint32(me))
	require.ErrorContains(t, err, "not a regular file")
}

func TestSessionsModeHasNoChild(t *testing.T) {
	b, err := json.Marshal(Status{Mode: ModeSessions, Child: ChildStatus{PID: 3}})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.NotContains(t, m, "child")
	assert.Equal(t, []any{}, m["sessions"])

	b, err = json.Marshal(Status{Mode: ModeSessions, Sessions: []Session{{Name: "sh1", PID: 12, Tty: true}}})
	require.NoError(t, err)
	var back Status
	require.NoError(t, json.Unmarshal(b, &back))
	require.Len(t, back.Sessions, 1)
	assert.Equal(t, "sh1", back.Sessions[0].Name)

	// The sessions encoded already are written as they are, last, where
	// the same sessions as values would be.
	sessions := []Session{{Name: "sh1", PID: 12, Tty: true}, {Name: "sh2", PID: 13}}
	fromValues, err := Status{Mode: ModeSessions, PID: 1, Sessions: sessions}.MarshalJSON()
	require.NoError(t, err)
	encoded, err := json.Marshal(sessions)
	require.NoError(t, err)
	fromEncoded, err := Status{Mode: ModeSessions, PID: 1, SessionsJSON: encoded}.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, string(fromValues), string(fromEncoded))
	assert.True(t, json.Valid(fromEncoded), "%s", fromEncoded)
	assert.True(t, bytes.HasSuffix(fromEncoded, append([]byte(`,"sessions":`), append(encoded, '}')...)), "%s", fromEncoded)

	b, err = json.Marshal(Status{Mode: "stream", Child: ChildStatus{PID: 3}})
	require.NoError(t, err)
	m = nil
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Contains(t, m, "child")
	assert.NotContains(t, m, "sessions")
}
