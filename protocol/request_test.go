package protocol

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseRequest(t *testing.T) {
	r, err := ParseRequest([]byte("summarize README"))
	require.NoError(t, err)
	require.Equal(t, "summarize README\n", string(r.Stdin), "plain text plus a newline is the stdin")

	r, err = ParseRequest([]byte(`{"id":"a","stdin_b64":"/wA=","args":["x"],"timeout":"5s","reply":"send-1.x"}`))
	require.NoError(t, err)
	require.Equal(t, "a", r.ID)
	require.Equal(t, []byte{0xff, 0}, r.Stdin)
	require.Equal(t, []string{"x"}, r.Args)
	require.Equal(t, 5*time.Second, r.Limit)
	require.Equal(t, "send-1.x", r.Reply)

	for line, why := range map[string]string{
		`{"id":"a"`:                        "bad JSON",
		`{"id":"a","reply":"../x"}`:        "reply name",
		`{"reply":"/etc/passwd"}`:          "reply name",
		`{"reply":".."}`:                   "reply name",
		`{"timeout":"soon"}`:               "timeout",
		`{"stdin":"a","stdin_b64":"YQ=="}`: "not both",
		`{"stdin_b64":"***"}`:              "invalid request",
		`{"id":1}`:                         "invalid request",
	} {
		_, err := ParseRequest([]byte(line))
		require.Error(t, err, line)
		require.Contains(t, err.Error(), strings.Split(why, " ")[0], line)
	}
	r, err = ParseRequest([]byte(`{"id":"keep","reply":"ok","x":`))
	require.Error(t, err)
	require.Equal(t, "keep", r.ID, "a cut line still names its id")
	require.Equal(t, "ok", r.Reply, "a cut line still names its reply")

	r, err = ParseRequest([]byte(`{"id":"cut","reply":"mine","stdin":"hello wor`))
	require.ErrorContains(t, err, "bad JSON")
	require.Equal(t, "cut", r.ID, "a line cut inside a string is answered under its own id")
	require.Equal(t, "mine", r.Reply, "a line cut inside a string is answered on its own reply")

	r, err = ParseRequest([]byte(`{"id":"` + strings.Repeat("i", MaxIDLen+1) + `","reply":"ok"}`))
	require.ErrorContains(t, err, "id is 257 bytes")
	require.Empty(t, r.ID, "an over-long id is never echoed")
	require.Equal(t, "ok", r.Reply, "an over-long id is still answered on its reply")
	r, err = ParseRequest([]byte(`{"id":"` + strings.Repeat("i", MaxIDLen) + `"}`))
	require.NoError(t, err, "an id of exactly MaxIDLen bytes is fine")
	require.Len(t, r.ID, MaxIDLen)

	for line, want := range map[string]string{
		`{"id":1}`:            `field "id" must be a string, not a JSON number`,
		`{"args":"x"}`:        `field "args" must be an array of strings`,
		`{"args":[1]}`:        `field "args" must hold only strings`,
		`{"stdin_b64":"***"}`: `field "stdin_b64" is not valid base64`,
		`{"timeout":5}`:       `field "timeout" must be a string`,
	} {
		_, err := ParseRequest([]byte(line))
		require.ErrorContains(t, err, want, line)
		require.NotContains(t, err.Error(), "Go struct", line)
		require.NotContains(t, err.Error(), "protocol.", line)
	}
	require.True(t, IsBlank([]byte("")))
	require.True(t, IsBlank([]byte(" \t\r")))
	require.False(t, IsBlank([]byte(" x")))
}

func TestLineReader(t *testing.T) {
	const max = 10
	input := "short\n" + strings.Repeat("x", 25) + "\n" + strings.Repeat("y", max) + "\n" + strings.Repeat("z", max+1) + "\nlast\n"
	// One byte per read: requests arrive however the writer split them.
	l := NewLineReader(iotest.OneByteReader(strings.NewReader(input)), max)
	var got []string
	for {
		line, err := l.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var tl *TooLongError
		if errors.As(err, &tl) {
			got = append(got, "TOO LONG")
			continue
		}
		require.NoError(t, err)
		got = append(got, string(line))
	}
	require.Equal(t, []string{"short", "TOO LONG", strings.Repeat("y", max), "TOO LONG", "last"}, got)
}

func TestLineReaderLargeLimit(t *testing.T) {
	big := strings.Repeat("b", 300<<10) // larger than the reader's buffer
	l := NewLineReader(strings.NewReader(big+"\nok\n"), 1<<20)
	line, err := l.Next()
	require.NoError(t, err)
	require.Equal(t, len(big), len(line))
	line, err = l.Next()
	require.NoError(t, err)
	require.Equal(t, "ok", string(line))
}

func TestTooLongLineIsAnsweredOnItsReply(t *testing.T) {
	line := `{"id":"big","reply":"send-1-ab","stdin":"` + strings.Repeat("x", 5000) + "\"}\n"
	l := NewLineReader(strings.NewReader(line+"next\n"), 1024)
	_, err := l.Next()
	var tl *TooLongError
	require.ErrorAs(t, err, &tl)
	id, reply := SalvageHead(tl.Head)
	require.Equal(t, "big", id)
	require.Equal(t, "send-1-ab", reply)
	next, err := l.Next()
	require.NoError(t, err)
	require.Equal(t, "next", string(next))

	id, reply = SalvageHead([]byte(`{"stdin":"xxxxxxxx`))
	require.Empty(t, id+reply, "nothing to salvage past a cut value")
}

func TestValidReplyName(t *testing.T) {
	for _, ok := range []string{"a", "send-1.x_Y", strings.Repeat("z", 128), "...", ".a"} {
		require.True(t, ValidReplyName(ok), ok)
	}
	for _, bad := range []string{"", ".", "..", "../x", "/etc/passwd", "a/b", "a b", "é", strings.Repeat("z", 129), "a\x00"} {
		require.False(t, ValidReplyName(bad), "%q", bad)
	}
}

func TestParseCancel(t *testing.T) {
	r, err := ParseRequest([]byte(`{"cancel":"r1"}`))
	require.NoError(t, err)
	require.True(t, r.IsCancel)
	require.Equal(t, "r1", r.Cancel)
	require.Equal(t, "r1", r.ID, "the answer to a cancel carries the id canceled")

	r, err = ParseRequest([]byte(`{"id":"x","cancel":"r2","reply":"mine"}`))
	require.NoError(t, err)
	require.True(t, r.IsCancel)
	require.Equal(t, "r2", r.ID)
	require.Equal(t, "mine", r.Reply)

	r, err = ParseRequest([]byte(`{"cancel":"` + strings.Repeat("x", MaxIDLen+1) + `"}`))
	require.Error(t, err)
	require.False(t, r.IsCancel)
	require.Empty(t, r.ID)

	r, err = ParseRequest([]byte(`{"cancel":"r3","reply":"../x"}`))
	require.Error(t, err)
	require.False(t, r.IsCancel)

	r, err = ParseRequest([]byte(`{"cancel":""}`))
	require.NoError(t, err)
	require.False(t, r.IsCancel, "an empty cancel names no request")

	line := AppendCancel(nil, "a\"b\n")
	require.Equal(t, `{"cancel":"a\"b\n"}`+"\n", string(line))
	r, err = ParseRequest(line[:len(line)-1])
	require.NoError(t, err)
	require.Equal(t, "a\"b\n", r.Cancel)
}

// Each gives every line, and a too-long one as its error, until the
// reader ends; what is left is Rest.
func TestLineReaderEach(t *testing.T) {
	l := NewLineReader(strings.NewReader("a\n"+strings.Repeat("x", 20)+"\nb\ncut"), 10)
	var got []string
	l.Each(func(line []byte, err error) {
		var tooLong *TooLongError
		if errors.As(err, &tooLong) {
			got = append(got, "too long")
			return
		}
		require.NoError(t, err)
		got = append(got, string(line))
	})
	require.Equal(t, []string{"a", "too long", "b"}, got)
	require.Equal(t, "cut", string(l.Rest()))
}

// waitingReader is a Waiter over r: each WaitReadable is counted, and
// held tells whether the LineReader held a buffer while it waited.
type waitingReader struct {
	r     io.Reader
	l     *LineReader
	waits int
	held  bool
}

func (w *waitingReader) Read(p []byte) (int, error) { return w.r.Read(p) }

func (w *waitingReader) WaitReadable() error {
	w.waits++
	if w.l.r != nil {
		w.held = true
	}
	return nil
}

// TestLineReaderWaiterHoldsNothing: over a Waiter, a LineReader gives its
// buffer back before it waits for the next bytes, and lets the room of a
// long line go once it was returned; the lines are what they are.
func TestLineReaderWaiterHoldsNothing(t *testing.T) {
	long := strings.Repeat("l", 3*keptLine)
	w := &waitingReader{r: iotest.OneByteReader(strings.NewReader("a\nb\n" + long + "\nc\n"))}
	l := NewLineReader(w, 1<<20)
	w.l = l
	var got []string
	l.Each(func(line []byte, err error) {
		require.NoError(t, err)
		got = append(got, string(line))
		if string(line) == "c" {
			require.LessOrEqual(t, cap(l.line), keptLine, "room of the long line kept")
		}
	})
	require.Equal(t, []string{"a", "b", long, "c"}, got)
	require.False(t, w.held, "a buffer held while waiting for bytes")
	require.GreaterOrEqual(t, w.waits, 4, "waits: one before each line read byte by byte")
}
