package protocol

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidSessionName(t *testing.T) {
	for _, name := range []string{"sh1", "a", "A.b_c-9", strings.Repeat("x", 64), "x.."} {
		assert.True(t, ValidSessionName(name), name)
	}
	for _, name := range []string{"", ".hid", ".", "..", "../x", "a/b", strings.Repeat("x", 65), "a b", "é", "a\x00"} {
		assert.False(t, ValidSessionName(name), name)
	}
}

func TestParseControl(t *testing.T) {
	c, err := ParseControl([]byte(`{"id":"o1","reply":"R","op":"open","session":"sh1","tty":true,"args":["-x"],"timeout":"5s"}`))
	require.NoError(t, err)
	assert.Equal(t, "o1", c.ID)
	assert.Equal(t, "R", c.Reply)
	assert.Equal(t, OpOpen, c.Op)
	assert.Equal(t, "sh1", c.Session)
	require.NotNil(t, c.Tty)
	assert.True(t, *c.Tty)
	assert.Equal(t, []string{"-x"}, c.Args)
	assert.Equal(t, "5s", c.Timeout)
	assert.Equal(t, int64(5e9), int64(c.Limit))

	c, err = ParseControl([]byte(`{"id":"l","reply":"R","op":"list"}`))
	require.NoError(t, err)
	assert.Equal(t, OpList, c.Op)
}

func TestParseControlRefuses(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`plain text`, "JSON lines"},
		{`{"id":"x","reply":"R","op":"open","session":"../x"}`, "invalid session name"},
		{`{"id":"x","reply":"R","op":"open","session":".hid"}`, "invalid session name"},
		{`{"id":"x","reply":"R","op":"close","session":""}`, "invalid session name"},
		{`{"id":"x","reply":"R","op":"open","session":"` + strings.Repeat("a", 65) + `"}`, "invalid session name"},
		{`{"id":"x","reply":"R","op":"boom"}`, "invalid op"},
		{`{"id":"x","op":"list"}`, `"reply" is required`},
		{`{"id":"x","reply":"R","op":"signal","session":"s"}`, `"signal" is required`},
		{`{"id":"x","reply":"R","op":"open","session":"s","timeout":"-1s"}`, "invalid timeout"},
		{`{"id":"x","reply":"R","op":"open","session":"s","tty":"yes"}`, "invalid control line"},
		// Each field's error names what it takes, not always a string.
		{`{"id":"x","reply":"R","op":"close","all":"true"}`, `field "all" must be true or false, not a JSON string`},
		{`{"id":"x","reply":"R","op":"open","session":"s","tty":1}`, `field "tty" must be true or false, not a JSON number`},
		{`{"id":"x","reply":"R","op":"open","session":"s","env":"A=b"}`, `field "env" must be an array, not a JSON string`},
		{`{"id":"x","reply":"R","op":"open","session":"s","cwd":1}`, `field "cwd" must be a string, not a JSON number`},
	} {
		c, err := ParseControl([]byte(tc.line))
		require.Error(t, err, tc.line)
		assert.Contains(t, err.Error(), tc.want, tc.line)
		if strings.HasPrefix(tc.line, `{"id":"x","reply":"R"`) {
			assert.Equal(t, "x", c.ID, tc.line)
			assert.Equal(t, "R", c.Reply, tc.line)
		}
	}
	_, err := ParseControl([]byte(`{"id":"x","reply":"R","op":"list","op":"open"}`))
	assert.True(t, errors.Is(err, ErrDamaged), "%v", err)
}

func TestSessionFrames(t *testing.T) {
	decode := func(b []byte) Frame {
		t.Helper()
		require.True(t, strings.HasSuffix(string(b), "}\n"))
		var f Frame
		require.NoError(t, json.Unmarshal(b, &f))
		return f
	}
	f := decode(AppendOpened(nil, "o1", 12, false))
	assert.Equal(t, Frame{ID: "o1", Type: FrameOpened, Pid: 12}, f)
	f = decode(AppendOpened(nil, "o1", 12, true))
	assert.True(t, f.Reused)
	f = decode(AppendClosed(nil, "c", 143))
	require.NotNil(t, f.Code)
	assert.Equal(t, 143, *f.Code)
	f = decode(AppendSessions(nil, "l", nil))
	assert.JSONEq(t, `[]`, string(f.Sessions))
	f = decode(AppendSessions(nil, "l", json.RawMessage(`[{"name":"sh1"}]`)))
	assert.JSONEq(t, `[{"name":"sh1"}]`, string(f.Sessions))
	f = decode(AppendOpenError(nil, "o", "cannot start", 127, false))
	require.NotNil(t, f.Code)
	assert.Equal(t, 127, *f.Code)
	assert.Equal(t, FrameError, f.Type)
	f = decode(AppendOpenError(nil, "o", "no prompt", 0, true))
	assert.Nil(t, f.Code)
	assert.True(t, f.TimedOut)
	f = decode(AppendSignaled(nil, "s"))
	assert.Equal(t, FrameSignaled, f.Type)
	f = decode(AppendEOF(nil, "e"))
	assert.Equal(t, FrameEOF, f.Type)
	assert.Equal(t, "e", f.ID)
}

// FuzzParseControl checks that no line makes ParseControl panic or
// return an id, reply or session name it must not, and that what it
// accepts round-trips.
func FuzzParseControl(f *testing.F) {
	for _, seed := range []string{
		`{"id":"o1","reply":"R","op":"open","session":"sh1","tty":true,"args":["-x"],"env":["A=b"],"cwd":"/tmp","timeout":"5s"}`,
		`{"id":"c","reply":"R","op":"close","session":"../x"}`,
		`{"id":"l","reply":"R","op":"list"}`,
		`{"id":"s","reply":"R","op":"signal","session":"a","signal":"INT"}`,
		`{"id":"s","reply":"R","op":"open","session":"a","prompt":"^> $","continuation":"","size":"80x24","reuse":true}`,
		`{"id":"cut","reply":"mine","op":"open","session":"sh`,
		`plain`,
		``,
	} {
		f.Add([]byte(seed))
	}
	// Sealed (issue 32): a long open, with a terminal size of its own,
	// and a short list.
	f.Add(lines(WireLine([]byte(`{"id":"o2","reply":"R","op":"open","session":"a","tty":true,"size":"100x30","env":["BIG=` +
		strings.Repeat("e", 6000) + `"],"args":["` + strings.Repeat("a", 10000) + `"]}`)))[0])
	f.Add(sealForTest([]byte(`{"id":"l","reply":"R","op":"list"}`)))
	f.Fuzz(func(t *testing.T, line []byte) {
		c, err := ParseControl(line)
		requireWholeIfTaken(t, line, err)
		if len(c.ID) > MaxIDLen {
			t.Fatalf("id of %d bytes returned (err %v)", len(c.ID), err)
		}
		if c.Reply != "" && !ValidReplyName(c.Reply) {
			t.Fatalf("invalid reply name %q returned (err %v)", c.Reply, err)
		}
		if err != nil {
			return
		}
		// Only an open and a close of one name need a session; list,
		// close -all and stream mode's signal, watch and eof name none.
		named := c.Op == OpOpen || (c.Op == OpClose && !c.All)
		if c.Reply == "" || c.Limit < 0 || (named && !ValidSessionName(c.Session)) ||
			(c.Session != "" && !ValidSessionName(c.Session)) {
			t.Fatalf("line %q accepted as %+v", line, c)
		}
		back, err := json.Marshal(c.Control)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseControl(lines(WireLine(back))[0])
		if err != nil {
			t.Fatalf("%q round-tripped to an error: %v", line, err)
		}
		again, _ := json.Marshal(b.Control)
		if string(again) != string(back) || b.Limit != c.Limit {
			t.Fatalf("%q round-tripped to %s, want %s", line, again, back)
		}
	})
}

// The agent's control loop compiles an open's prompt and continuation:
// one that would cost it long (33 KB of "[a-y]{1000}" took most of a
// second and hundreds of megabytes, and every other open, close and
// list waited) is refused as the line is parsed. Prompts of any real
// shell or REPL pass.
func TestParseControlBoundsPatterns(t *testing.T) {
	open := func(key, expr string) string {
		b, err := json.Marshal(map[string]any{"id": "x", "reply": "R", "op": "open", "session": "s", key: expr})
		require.NoError(t, err)
		return string(b)
	}
	for _, expr := range []string{
		strings.Repeat("[a-y]{1000}", 3000) + "z", // long and huge
		strings.Repeat("[a-y]{1000}", 6),          // short and huge
		`(?:(?:\b|x){40}){25}y{1000}`,             // nested repeats
		strings.Repeat("x", 1025),                 // longer than maxPattern
	} {
		for _, key := range []string{"prompt", "continuation"} {
			_, err := ParseControl([]byte(open(key, expr)))
			require.Error(t, err, "%s %.60s", key, expr)
			assert.Contains(t, err.Error(), "invalid "+key)
		}
	}
	for _, expr := range []string{`^[#$] $`, `^(>>>|\.\.\.) $`, `^\(venv\) [^@]+@[^:]+:.{0,200}[$#] $`, `^In \[\d+\]: $`, ``, `(`} {
		_, err := ParseControl([]byte(open("prompt", expr)))
		assert.NoError(t, err, expr)
	}
}
