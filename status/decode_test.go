//go:build linux

package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/sharedir"
)

// sessionsFile is a sessions mode status file with sessions named
// names, the last one's unready prompt and last line set to prompt and
// line (which may hold anything, the other names included).
func sessionsFile(names []string, prompt, line string) Status {
	s := Status{PID: 1, Mode: ModeSessions, State: "running", StartedAt: time.Unix(5, 0).UTC(),
		Inputs: map[string]FIFO{"in": {Dev: 1, Ino: 2}}}
	for i, name := range names {
		sess := Session{Name: name, PID: 10 + i, State: "running", Tty: i%2 == 0,
			Child:  ChildStatus{PID: 10 + i, Starts: 1, TTY: &TTY{Cols: 80, Rows: 24}},
			Turn:   &Turn{State: "ready", Answered: uint64(i)},
			Inputs: map[string]FIFO{"in": {Ino: uint64(100 + i)}, "ask": {Ino: uint64(200 + i), Btime: 7}}}
		if i == len(names)-1 {
			sess.Turn.Unready = &Unready{Prompt: prompt, LastLine: line}
		}
		s.Sessions = append(s.Sessions, sess)
	}
	return s
}

// requireDecodes checks that decode of b reads what encoding/json reads:
// the same fields, and each session (and no other) by its name.
func requireDecodes(t *testing.T, b []byte, names ...string) {
	t.Helper()
	var want Status
	require.NoError(t, json.Unmarshal(b, &want), "%s", b)
	got, err := decode(b)
	require.NoError(t, err, "%s", b)
	for _, sess := range want.Sessions {
		found, ok := got.Session(sess.Name)
		require.True(t, ok, "session %q in %s", sess.Name, b)
		require.Equal(t, sess, found)
	}
	for _, name := range names {
		_, ok := got.Session(name)
		_, listed := want.Session(name)
		require.Equal(t, listed, ok, "session %q in %s", name, b)
	}
	got.Sessions, got.SessionsJSON, want.Sessions = nil, nil, nil
	require.Equal(t, want, got)
}

// A status file read decodes all but its sessions, which it keeps as
// written; a session looked up is the one encoding/json would decode,
// whatever the others hold, and wherever "sessions" is.
func TestDecodeSessionsLazily(t *testing.T) {
	names := []string{"a", "s1", "s10", "s1.x", "b-2"}
	for _, tc := range []struct{ name, prompt, line string }{
		{"plain", `^\$ $`, "$ "},
		{"other names in the strings", `"s1"`, `{"name":"s1"} ] [ } {`},
		{"escapes", "\\\"\u2028\x01", `\\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sessionsFile(names, tc.prompt, tc.line)
			compact, err := s.MarshalJSON()
			require.NoError(t, err)
			requireDecodes(t, compact, "s", "s1 ", "c", "")
			got, err := decode(compact)
			require.NoError(t, err)
			require.Nil(t, got.Sessions, "the sessions are left encoded")
			encoded, err := json.Marshal(s.Sessions)
			require.NoError(t, err)
			require.Equal(t, string(encoded), string(got.SessionsJSON))
			again, err := got.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, string(compact), string(again), "a file read is written back as it was")

			indented, err := json.MarshalIndent(json.RawMessage(compact), "", "  ")
			require.NoError(t, err)
			requireDecodes(t, indented, "s", "c")
		})
	}
	for _, b := range []string{
		`{"sessions":[{"name":"a"}],"pid":3}`,
		`{"pid":3, "sessions" : [ ] , "mode":"sessions"}`,
		`{"sessions":null,"pid":3}`,
		`{"pid":3}`,
		`{}`,
	} {
		requireDecodes(t, []byte(b), "a", "b")
	}
}

// What is not JSON fails to decode as it does with encoding/json.
func TestDecodeRefusesDamage(t *testing.T) {
	s := sessionsFile([]string{"a", "b"}, "p", "l")
	b, err := s.MarshalJSON()
	require.NoError(t, err)
	for _, cut := range []int{1, len(b) / 3, len(b) / 2, len(b) - 2, len(b) - 1} {
		_, err := decode(b[:cut])
		assert.Error(t, err, "%s", b[:cut])
	}
	for _, damaged := range []string{``, `[]`, `{"pid":}`, `{"pid":1,}`, `{"pid":1}x`, `{"sessions":[}`, `{"pid":1 "mode":""}`} {
		_, err := decode([]byte(damaged))
		assert.Error(t, err, "%s", damaged)
	}
}

// Whatever a session's strings hold, the one looked up is the one
// encoding/json decodes.
func FuzzDecodeSession(f *testing.F) {
	f.Add("s1", `^\$ $`, "$ ", false)
	f.Add("a", `"a"`, `{"name":"a"}]`, true)
	f.Add("x.y", "\\", "\"\\\"", false)
	f.Fuzz(func(t *testing.T, name, prompt, line string, indent bool) {
		s := sessionsFile([]string{name, "other", name + "x"}, prompt, line)
		b, err := s.MarshalJSON()
		require.NoError(t, err)
		if indent {
			b, err = json.MarshalIndent(json.RawMessage(b), "", "\t")
			require.NoError(t, err)
		}
		requireDecodes(t, b, name, "other", fmt.Sprintf("%s!", name))
	})
}

// What ls shows of each session is what decoding the array whole gives,
// in its order, without decoding the rest.
func TestBriefs(t *testing.T) {
	s := sessionsFile([]string{"a", `q"uote`, "é", "s1"}, `"name":"x"`, "}]")
	s.Sessions[1].Turn = nil
	s.Sessions[2].Restarts, s.Sessions[2].StartedAt = 3, time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	s.Sessions[3].State = "backoff"
	encoded, err := json.Marshal(s.Sessions)
	require.NoError(t, err)
	indented, err := json.MarshalIndent(s.Sessions, "", " ")
	require.NoError(t, err)
	var want []Brief
	for _, sess := range s.Sessions {
		b := Brief{Name: sess.Name, PID: sess.PID, State: sess.State, StartedAt: sess.StartedAt, Restarts: sess.Restarts}
		if sess.Turn != nil {
			b.Turn = sess.Turn.State
		}
		want = append(want, b)
	}
	for _, b := range [][]byte{encoded, indented} {
		got, err := Briefs(b)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	got, err := Briefs(json.RawMessage(`[]`))
	require.NoError(t, err)
	require.Empty(t, got)
	for _, damaged := range []string{``, `[`, `[{"name":"a"`, `[{"name":1}]`, `[{"pid":"x"}]`, `[{"started_at":"then"}]`} {
		_, err := Briefs(json.RawMessage(damaged))
		require.Error(t, err, "%s", damaged)
	}
}

// readAll reads a file whole, whatever its length, or its first limit
// bytes.
func TestReadAll(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 100000} {
		want := bytes.Repeat([]byte("x"), n)
		path := filepath.Join(dir, fmt.Sprint(n))
		require.NoError(t, os.WriteFile(path, want, 0o600))
		f, err := os.Open(path)
		require.NoError(t, err)
		got, err := readAll(f, 0)
		require.NoError(t, err)
		require.Equal(t, want, got)
		_, err = f.Seek(0, io.SeekStart)
		require.NoError(t, err)
		got, err = readAll(f, 1000)
		require.NoError(t, err)
		require.Equal(t, want[:min(n, 1000)], got)
		f.Close()
	}
}

// A head read decodes what a whole read does but the sessions, which it
// does not read: here a file of 300 sessions, whose fields come in the
// first kilobyte; and it reads a file without sessions (stream mode),
// or one it cannot take, as a whole read does.
func TestReadHead(t *testing.T) {
	dir := t.TempDir()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	names := make([]string, 300)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	for _, s := range []Status{sessionsFile(names, "p", "l"), {PID: 3, Mode: "stream", State: "running"}, sessionsFile(nil, "", "")} {
		require.NoError(t, WriteAt(d, "status.json", s, 0o600))
		whole, err := ReadAt(d, "status.json")
		require.NoError(t, err)
		head, err := ReadHeadAt(d, "status.json")
		require.NoError(t, err)
		owned, err := ReadOwnedHeadAt(d, "status.json", uint32(os.Geteuid()))
		require.NoError(t, err)
		require.Nil(t, head.SessionsJSON)
		require.Equal(t, head, owned)
		whole.Sessions, whole.SessionsJSON = nil, nil
		require.Equal(t, whole, head)
	}
	require.NoError(t, WriteAt(d, "status.json", sessionsFile(names, "p", "l"), 0o600))
	f, err := os.Open(filepath.Join(dir, "status.json"))
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	_, err = decodeHead(f, 0)
	require.NoError(t, err)
	at, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	require.Equal(t, int64(headChunk), at, "read one chunk of a file of %d bytes", st.Size())
	for _, damaged := range []string{``, `{"pid":`, `{"pid":1,}`, `[1]`} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bad"), []byte(damaged), 0o600))
		_, err := ReadHeadAt(d, "bad")
		require.Error(t, err, damaged)
	}
}
