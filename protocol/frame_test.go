package protocol

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

func decodeFrame(t *testing.T, line []byte) Frame {
	t.Helper()
	require.True(t, bytes.HasSuffix(line, []byte("\n")), "a frame is one line")
	require.Equal(t, 1, bytes.Count(line, []byte("\n")), "a frame is one line")
	var f Frame
	require.NoError(t, json.Unmarshal(line, &f), "%s", line)
	return f
}

func TestDataFramesRoundTrip(t *testing.T) {
	for name, data := range map[string][]byte{
		"text":          []byte("hello, wörld ✓\n"),
		"controls":      []byte("a\"b\\c\x00\x01\x1f\t\r\n<&>\u2028"),
		"invalid utf-8": {0xff, 'a', 0xc3},
		"empty":         {},
	} {
		t.Run(name, func(t *testing.T) {
			f := decodeFrame(t, AppendData(nil, "id\"1", FrameStdout, data))
			require.Equal(t, "id\"1", f.ID)
			require.Equal(t, FrameStdout, f.Type)
			require.Equal(t, string(data), string(f.Bytes()))
		})
	}
	t.Run("random bytes", func(t *testing.T) {
		rng := rand.New(rand.NewSource(1))
		for i := 0; i < 200; i++ {
			data := make([]byte, rng.Intn(300))
			rng.Read(data)
			f := decodeFrame(t, AppendData(nil, "r", FrameStderr, data))
			require.Equal(t, data, append([]byte{}, f.Bytes()...))
		}
	})
}

func TestControlFrames(t *testing.T) {
	f := decodeFrame(t, AppendStart(nil, "r1", 1234))
	require.Equal(t, Frame{ID: "r1", Type: FrameStart, Pid: 1234}, f)

	f = decodeFrame(t, AppendExit(nil, "r1", Exit{Code: 137, Signal: "KILL", TimedOut: true, Killed: true, DurationMS: 500}))
	require.Equal(t, 137, *f.Code)
	require.Equal(t, "KILL", f.Signal)
	require.True(t, f.TimedOut)
	require.True(t, f.Killed)
	require.False(t, f.Canceled)
	require.EqualValues(t, 500, *f.DurationMS)

	line := AppendExit(nil, "r2", Exit{DurationMS: 12})
	require.JSONEq(t, `{"id":"r2","type":"exit","code":0,"duration_ms":12}`, string(line))

	f = decodeFrame(t, AppendError(nil, "r3", "bad \"thing\"\n"))
	require.Equal(t, "bad \"thing\"\n", f.Error)
}

func TestCutIncompleteRune(t *testing.T) {
	euro := []byte("€") // three bytes
	for cut := 0; cut <= len(euro); cut++ {
		data := append([]byte("ab"), euro[:cut]...)
		whole, rest := CutIncompleteRune(data)
		if cut == 0 || cut == len(euro) {
			require.Equal(t, data, whole)
			require.Empty(t, rest)
		} else {
			require.Equal(t, "ab", string(whole))
			require.Equal(t, euro[:cut], rest)
		}
	}
	whole, rest := CutIncompleteRune([]byte{'a', 0xff})
	require.Equal(t, []byte{'a', 0xff}, whole, "an invalid byte is not held back")
	require.Empty(t, rest)
}

func BenchmarkAppendDataFrame(b *testing.B) {
	data := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 1500) // ~64 KiB
	var buf []byte
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendData(buf[:0], "r1", FrameStdout, data)
	}
}

// BenchmarkMarshalDataFrame is BenchmarkAppendDataFrame done with
// encoding/json, as jsonstr's doc comment compares them.
func BenchmarkMarshalDataFrame(b *testing.B) {
	data := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 1500) // ~64 KiB
	benchmarkMarshal(b, data)
}

// BenchmarkAppendSmallFrame and BenchmarkMarshalSmallFrame encode the
// frame of a short line, as an interactive child writes them.
func BenchmarkAppendSmallFrame(b *testing.B) {
	data := []byte("hello\n")
	var buf []byte
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendData(buf[:0], "r1", FrameStdout, data)
	}
}

func BenchmarkMarshalSmallFrame(b *testing.B) { benchmarkMarshal(b, []byte("hello\n")) }

func benchmarkMarshal(b *testing.B, data []byte) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := enc.Encode(Frame{ID: "r1", Type: FrameStdout, Data: string(data)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeFrame(b *testing.B) {
	data := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 1500)
	line := AppendData(nil, "r1", FrameStdout, data)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		var f Frame
		if err := json.Unmarshal(line, &f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseRequest(b *testing.B) {
	line := []byte(`{"id":"r1","reply":"send-1-abc","timeout":"5s","stdin":"summarize the README and list the open issues\n"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseRequest(line); err != nil {
			b.Fatal(err)
		}
	}
}

func TestWatchFrames(t *testing.T) {
	require.Equal(t, Frame{ID: "w1", Type: FrameWatching, Pid: 42}, decodeFrame(t, AppendWatching(nil, "w1", 42)))
	require.Equal(t, Frame{ID: "w1", Type: FrameLost, Lost: 1 << 40}, decodeFrame(t, AppendLost(nil, "w1", 1<<40)))
	f := decodeFrame(t, AppendData(nil, "w1", FrameOutput, []byte("a\xffb")))
	require.Equal(t, "a\xffb", string(f.Bytes()))
}
