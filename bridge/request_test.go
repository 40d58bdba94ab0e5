package bridge

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
	r, err := parseRequest([]byte("summarize README"))
	require.NoError(t, err)
	require.Equal(t, "summarize README\n", string(r.stdin), "plain text plus a newline is the stdin")

	r, err = parseRequest([]byte(`{"id":"a","stdin_b64":"/wA=","args":["x"],"timeout":"5s","reply":"send-1.x"}`))
	require.NoError(t, err)
	require.Equal(t, "a", r.ID)
	require.Equal(t, []byte{0xff, 0}, r.stdin)
	require.Equal(t, []string{"x"}, r.Args)
	require.Equal(t, 5*time.Second, r.timeout)
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
		_, err := parseRequest([]byte(line))
		require.Error(t, err, line)
		require.Contains(t, err.Error(), strings.Split(why, " ")[0], line)
	}
	r, err = parseRequest([]byte(`{"id":"keep","reply":"ok","x":`))
	require.Error(t, err)
	require.Equal(t, "", r.ID, "nothing is salvaged from a line that is not JSON")
}

func TestLineReader(t *testing.T) {
	const max = 10
	input := "short\n" + strings.Repeat("x", 25) + "\n" + strings.Repeat("y", max) + "\n" + strings.Repeat("z", max+1) + "\nlast\n"
	// One byte per read: requests arrive however the writer split them.
	l := newLineReader(iotest.OneByteReader(strings.NewReader(input)), max)
	var got []string
	for {
		line, err := l.next()
		if errors.Is(err, io.EOF) {
			break
		}
		var tl errTooLong
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
	l := newLineReader(strings.NewReader(big+"\nok\n"), 1<<20)
	line, err := l.next()
	require.NoError(t, err)
	require.Equal(t, len(big), len(line))
	line, err = l.next()
	require.NoError(t, err)
	require.Equal(t, "ok", string(line))
}

func TestTooLongLineIsAnsweredOnItsReply(t *testing.T) {
	line := `{"id":"big","reply":"send-1-ab","stdin":"` + strings.Repeat("x", 5000) + "\"}\n"
	l := newLineReader(strings.NewReader(line+"next\n"), 1024)
	_, err := l.next()
	var tl errTooLong
	require.ErrorAs(t, err, &tl)
	id, reply := salvageHead(tl.head)
	require.Equal(t, "big", id)
	require.Equal(t, "send-1-ab", reply)
	next, err := l.next()
	require.NoError(t, err)
	require.Equal(t, "next", string(next))

	id, reply = salvageHead([]byte(`{"stdin":"xxxxxxxx`))
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
