package protocol

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The seed corpora of these targets are in testdata/fuzz/FuzzX; CI runs
// each target for a bounded time (.ci/run).

// FuzzParseRequest checks that no line makes ParseRequest panic or return
// an id or reply name it must not, and that a plain line is its stdin.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{
		"summarize README",
		"",
		`{"id":"a","reply":"send-1.x","timeout":"5s","args":["x"],"stdin":"hi"}`,
		`{"id":"a","stdin_b64":"/wA=","reply":".."}`,
		`{"id":"cut","reply":"mine","stdin":"hello wor`,
		`{"id":1}`,
		`{"cancel":"r1"}`,
		`{"cancel":"r1","reply":"x","id":"other"}`,
		`{"cancel":""}`,
		`{"id":"v","reply":"vic","stdin":"a","reply":"att","x":"b"}`,
		`{"id":"v","Reply":"vic","rEpLy":"att"}`,
		`{"size":48,"sha256":"0000000000000000000000000000000000000000000000000000000000000000","id":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Add(lines(WireLine([]byte(`{"id":"big","reply":"r","stdin":"` + strings.Repeat("x", 5000) + `"}`)))[0])
	f.Add(sealForTest([]byte(`{"id":"own","reply":"r","stdin":"x","size":"80x24","SHA256":"y"}`)))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseRequest(line)
		requireWholeIfTaken(t, line, err)
		if len(r.ID) > MaxIDLen {
			t.Fatalf("id of %d bytes returned (err %v), more than %d", len(r.ID), err, MaxIDLen)
		}
		if r.Reply != "" && !ValidReplyName(r.Reply) {
			t.Fatalf("invalid reply name %q returned (err %v)", r.Reply, err)
		}
		if len(line) == 0 || line[0] != '{' {
			if err != nil || !r.IsPlain {
				t.Fatalf("plain line %q: err %v, plain %v", line, err, r.IsPlain)
			}
			if want := string(line) + "\n"; string(r.Stdin) != want {
				t.Fatalf("plain line %q has stdin %q, want %q", line, r.Stdin, want)
			}
			return
		}
		if r.IsPlain {
			t.Fatalf("JSON line %q parsed as plain text", line)
		}
		if err == nil && r.Limit < 0 {
			t.Fatalf("line %q: negative limit %v", line, r.Limit)
		}
		if r.IsCancel && (err != nil || r.Cancel == "" || r.ID != r.Cancel) {
			t.Fatalf("line %q: cancel %q with id %q, err %v", line, r.Cancel, r.ID, err)
		}
		if r.IsCancel {
			back, err := ParseRequest(bytes.TrimSuffix(AppendCancel(nil, r.Cancel), []byte("\n")))
			if err != nil || !back.IsCancel || back.Cancel != strings.ToValidUTF8(r.Cancel, "\uFFFD") {
				t.Fatalf("AppendCancel(%q) parses back as %+v, %v", r.Cancel, back, err)
			}
		}
		id, reply := SalvageHead(line)
		if len(id) > MaxIDLen || reply != "" && !ValidReplyName(reply) {
			t.Fatalf("SalvageHead(%q) = %q, %q", line, id, reply)
		}
	})
}

// requireWholeIfTaken fails t when line was taken (err is nil) although
// it may hold another writer's bytes: a line that claims a seal ({"size":
// and a digit) that does not match it, or a JSON object whose own keys
// (those after the seal) give one twice (by encoding/json's matching,
// found here with its own tokenizer).
func requireWholeIfTaken(t *testing.T, line []byte, err error) {
	t.Helper()
	if err != nil {
		return
	}
	obj := line
	if bytes.HasPrefix(line, []byte(sealSize)) && len(line) > len(sealSize) && '0' <= line[len(sealSize)] && line[len(sealSize)] <= '9' {
		size, rest, ok := parseSeal(line)
		if !ok || size != len(line) || !bytes.Equal(line[len(line)-len(rest)-digestLen-1:len(line)-len(rest)-1], hexDigest(sha256.Sum256(rest))) {
			t.Fatalf("a line of %d bytes without its seal was taken: %.100q", len(line), line)
		}
		// The line's own keys: the seal and its comma are framing.
		obj = append([]byte{'{'}, bytes.TrimPrefix(rest, []byte{','})...)
	}
	if len(obj) > 0 && obj[0] == '{' {
		if key, dup := duplicateByDecoder(obj); dup {
			t.Fatalf("line %q was taken, giving key %q twice", line, key)
		}
	}
}

// duplicateByDecoder finds a top-level key given twice in the JSON object
// obj with encoding/json's tokenizer and bytes.EqualFold: what
// duplicateKey finds by a quicker way.
func duplicateByDecoder(obj []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		key := tok.(string)
		for _, k := range keys {
			if bytes.EqualFold([]byte(k), []byte(key)) {
				return key, true
			}
		}
		keys = append(keys, key)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// FuzzDuplicateKey checks duplicateKey against encoding/json's tokenizer
// on every object encoding/json takes.
func FuzzDuplicateKey(f *testing.F) {
	for _, seed := range []string{
		`{"a":1,"A":2}`,
		`{"a":{"a":1},"b":["a","a"],"c":"\"a\""}`,
		`{"\u0061":1,"a":2}`,
		`{"ſ":1,"S":2}`,
		` { "x" : [ {"y":"}"} ] , "x" : null } `,
		`{"\\":1,"\\\"":2}`,
		`{"\xff":1,"\xfe":2}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(obj, &m) != nil {
			return
		}
		want, wantDup := duplicateByDecoder(obj)
		got, dup := duplicateKey(obj)
		if dup != wantDup || dup && foldKey(got) != foldKey(want) {
			t.Fatalf("duplicateKey(%q) = %q, %v; encoding/json's tokenizer finds %q, %v", obj, got, dup, want, wantDup)
		}
	})
}

// FuzzSplice checks that whatever another writer puts between two pieces
// of a sealed line (insert, after piece at), the agent never takes the
// sealed line spliced, and no line names the sealed line's reply unless
// it begins with the sealed line's first piece. The
// sealed line's stdin is pattern repeated to PipeBuf+extra bytes: small
// inputs, which the fuzzer minimizes quickly.
func FuzzSplice(f *testing.F) {
	f.Add([]byte("s"), uint16(1000), []byte(`","reply":"att","x":"`), uint8(0))
	f.Add([]byte("s"), uint16(5000), []byte("\nX\"}\n{\"id\":\"q\",\"reply\":\"att\",\"stdin\":\""), uint8(2))
	f.Add([]byte("\xff"), uint16(2000), []byte("\n"), uint8(1))
	f.Add([]byte("a\"\\\n"), uint16(7000), []byte("\n{}\n"), uint8(0))
	f.Fuzz(func(t *testing.T, pattern []byte, extra uint16, insert []byte, at uint8) {
		if len(pattern) == 0 || len(insert) == 0 {
			return
		}
		n := PipeBuf + int(extra)
		stdin := bytes.Repeat(pattern, n/len(pattern)+1)[:n]
		obj, err := json.Marshal(Request{ID: "victim", Reply: "victim-reply", Stdin: string(stdin)})
		if !utf8.Valid(stdin) {
			obj, err = json.Marshal(Request{ID: "victim", Reply: "victim-reply", StdinB64: stdin})
		}
		if err != nil {
			t.Fatal(err)
		}
		wire := WireLine(obj)
		pieces := len(wire) / PipeBuf
		cut := (int(at)%(pieces-1) + 1) * PipeBuf
		stream := append(append(append([]byte(nil), wire[:cut]...), insert...), wire[cut:]...)
		start := 0
		for _, l := range SplitLines(stream) {
			from, to := start, start+len(l) // l's span in stream
			start = to + 1
			// Bytes of the sealed line: before cut, or from cut+len(insert).
			if IsBlank(l) || from >= cut && to <= cut+len(insert) {
				continue
			}
			r, err := ParseRequest(l)
			// The sealed line's own (it begins with its first piece) is
			// never taken spliced. A line the other writer made around a
			// later piece may be (an unsealed line is taken as it is:
			// see seal.go), but never names the sealed line's reply.
			if err == nil && from < PipeBuf {
				t.Fatalf("insert %q after byte %d: line %.100q, which holds bytes of another's, was taken", insert, cut, l)
			}
			if r.Reply == "victim-reply" && from != 1 {
				t.Fatalf("insert %q after byte %d: damaged line %.100q names the victim's reply", insert, cut, l)
			}
		}
	})
}

// chunkReader returns its data in reads of the sizes sizes gives in turn
// (1 to 256 bytes; sizes repeats), so that a fuzzer decides how a writer
// split the stream.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)]) + 1
		c.i++
	}
	n = copy(p, c.data[:min(n, len(c.data))])
	c.data = c.data[n:]
	return n, nil
}

// FuzzLineReader checks that, whatever the input, the limit, the buffer
// size and the way the input is split into reads, LineReader returns the
// complete lines within the limit, reports each longer line exactly once as
// a *TooLongError carrying its head, and holds no more than about the limit.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("short\nxxxxxxxxxxxxxxxxxxxxxxxxx\nyyyyyyyyyy\nzzzzzzzzzzz\nlast\n"), uint16(10), uint8(0), []byte{0})
	f.Add([]byte("a\n\nbb\ncut"), uint16(1), uint8(3), []byte{2, 0, 7})
	f.Add([]byte(strings.Repeat("x", 100)+"\nok\n"), uint16(50), uint8(1), []byte{255})
	f.Fuzz(func(t *testing.T, input []byte, limit uint16, bufSize uint8, sizes []byte) {
		max := int(limit) % (len(input) + 2)
		// bufio's smallest buffer is 16 bytes; small buffers exercise the
		// path where a line spans several buffers.
		l := &LineReader{r: bufio.NewReaderSize(&chunkReader{data: input, sizes: sizes}, 16+int(bufSize)), max: max}

		lines := bytes.Split(input, []byte("\n"))
		tail := lines[len(lines)-1] // after the last newline: not a line
		for _, want := range lines[:len(lines)-1] {
			got, err := l.Next()
			requireLineBounded(t, l, max)
			if len(want) <= max {
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("limit %d: got %q, %v; want line %q", max, got, err, want)
				}
				continue
			}
			var tl *TooLongError
			if !errors.As(err, &tl) {
				t.Fatalf("limit %d: line of %d bytes: got %q, %v; want a *TooLongError", max, len(want), got, err)
			}
			whole := append(want, '\n')
			if tl.Limit != max || len(tl.Head) > headLen || len(tl.Head) < min(max+1, headLen) || !bytes.HasPrefix(whole, tl.Head) {
				t.Fatalf("limit %d: line %q reported with limit %d, head %q", max, want, tl.Limit, tl.Head)
			}
		}
		got, err := l.Next()
		if !errors.Is(err, io.EOF) {
			t.Fatalf("after the last line: got %q, %v; want io.EOF", got, err)
		}
		requireLineBounded(t, l, max)
		if len(tail) <= max && !bytes.Equal(l.Rest(), tail) {
			t.Fatalf("Rest() = %q, want the unterminated %q", l.Rest(), tail)
		}
	})
}

// requireLineBounded fails t if the reader's line buffer grew past what a
// line of max bytes and its newline need, allowing for append's doubling
// and size classes.
func requireLineBounded(t *testing.T, l *LineReader, max int) {
	t.Helper()
	if c := cap(l.line); c > 2*(max+1)+64 {
		t.Fatalf("line buffer holds %d bytes for a limit of %d", c, max)
	}
}

// FuzzFrames checks that every frame is exactly one line of JSON that
// encoding/json decodes to what was encoded, whatever the bytes: ids and
// messages that are not valid UTF-8 have their bad bytes replaced.
func FuzzFrames(f *testing.F) {
	f.Add("r1", FrameStdout, []byte("hello, wörld ✓\n"), "bad \"thing\"\n", "KILL", 137, int64(500), uint8(7), 1234)
	f.Add("id\"\\\x00", FrameStderr, []byte{0xff, 'a', 0xc3}, "\xff\xfe", "", 0, int64(0), uint8(0), 0)
	f.Add("\xc3", "x\"y", []byte("\u2028<&>\x7f"), "", "TERM", -1, int64(-5), uint8(2), -1)
	f.Fuzz(func(t *testing.T, id, typ string, data []byte, msg, signal string, code int, ms int64, flags uint8, pid int) {
		wantID := strings.ToValidUTF8(id, "\uFFFD")

		fr := decodeOne(t, AppendData(nil, id, typ, data))
		if fr.ID != wantID || fr.Type != strings.ToValidUTF8(typ, "\uFFFD") || !bytes.Equal(fr.Bytes(), data) {
			t.Fatalf("data frame decoded to id %q, type %q, data %q; want %q, %q, %q", fr.ID, fr.Type, fr.Bytes(), wantID, typ, data)
		}

		fr = decodeOne(t, AppendError(nil, id, msg))
		if fr.ID != wantID || fr.Type != FrameError || fr.Error != strings.ToValidUTF8(msg, "\uFFFD") {
			t.Fatalf("error frame decoded to %+v; want id %q, message %q", fr, wantID, msg)
		}

		fr = decodeOne(t, AppendStart(nil, id, pid))
		if fr.ID != wantID || fr.Type != FrameStart || fr.Pid != pid {
			t.Fatalf("start frame decoded to %+v; want id %q, pid %d", fr, wantID, pid)
		}

		x := Exit{Code: code, Signal: signal, TimedOut: flags&1 != 0, Canceled: flags&2 != 0, Killed: flags&4 != 0, DurationMS: ms}
		fr = decodeOne(t, AppendExit(nil, id, x))
		switch {
		case fr.ID != wantID || fr.Type != FrameExit:
			t.Fatalf("exit frame decoded to id %q, type %q; want %q", fr.ID, fr.Type, wantID)
		case fr.Code == nil || *fr.Code != code || fr.DurationMS == nil || *fr.DurationMS != ms:
			t.Fatalf("exit frame decoded to %+v; want code %d, duration %d", fr, code, ms)
		case fr.TimedOut != x.TimedOut || fr.Canceled != x.Canceled || fr.Killed != x.Killed:
			t.Fatalf("exit frame decoded to %+v; want %+v", fr, x)
		case fr.Signal != strings.ToValidUTF8(signal, "\uFFFD"):
			t.Fatalf("exit frame decoded to signal %q; want %q", fr.Signal, signal)
		}

		e := End{TimedOut: flags&1 != 0, DurationMS: ms}
		fr = decodeOne(t, AppendEnd(nil, id, e))
		if fr.ID != wantID || fr.Type != FrameEnd || fr.TimedOut != e.TimedOut || fr.Ready == e.TimedOut ||
			fr.DurationMS == nil || *fr.DurationMS != ms {
			t.Fatalf("end frame decoded to %+v; want id %q, %+v", fr, wantID, e)
		}
	})
}

// FuzzEndFrame checks that an end frame is one line of JSON that
// encoding/json decodes to what was encoded, whatever the prompt's groups
// (names and texts taken from groups, "\x00" between them): every name
// once, the first text of a name, bad UTF-8 replaced; and that the groups
// come in their order. With flags&4 the groups' string is also the
// not-ready message, whatever its bytes; flags&8 says queued.
func FuzzEndFrame(f *testing.F) {
	f.Add("a1", "status\x001\x00cwd\x00/src", 1, true, uint8(0), int64(12))
	f.Add("a1", "status\x00x\x00status\x00y\x00\xff\x00\xfe\x00\xfe\x00z", -3, false, uint8(3), int64(-1))
	f.Add("", "", 0, true, uint8(2), int64(0))
	f.Add("a2", "the child has shown no prompt\x00\"x\"\xff", 0, false, uint8(5), int64(1000))
	f.Add("a3", "", 0, false, uint8(9), int64(1000))
	f.Fuzz(func(t *testing.T, id, groups string, status int, hasStatus bool, flags uint8, ms int64) {
		e := End{TimedOut: flags&1 != 0, Incomplete: flags&2 != 0, Queued: flags&8 != 0, DurationMS: ms}
		if flags&4 != 0 {
			e.NotReady = groups
		}
		if hasStatus {
			e.Status = &status
		}
		parts := strings.Split(groups, "\x00")
		for i := 0; i+1 < len(parts); i += 2 {
			e.Prompt = append(e.Prompt, PromptGroup{Name: parts[i], Text: parts[i+1]})
		}
		line := AppendEnd(nil, id, e)
		fr := decodeOne(t, line)
		switch {
		case fr.ID != strings.ToValidUTF8(id, "\uFFFD") || fr.Type != FrameEnd:
			t.Fatalf("end frame %q decoded to id %q, type %q", line, fr.ID, fr.Type)
		case fr.TimedOut != e.TimedOut || fr.Incomplete != e.Incomplete || fr.Queued != e.Queued || fr.Ready != (!e.TimedOut && !e.Incomplete):
			t.Fatalf("end frame %q decoded to %+v; want %+v", line, fr, e)
		case (fr.Status == nil) != !hasStatus || hasStatus && *fr.Status != status:
			t.Fatalf("end frame %q decoded to status %v; want %d (%v)", line, fr.Status, status, hasStatus)
		case fr.DurationMS == nil || *fr.DurationMS != ms:
			t.Fatalf("end frame %q decoded to duration %v; want %d", line, fr.DurationMS, ms)
		case fr.NotReady != strings.ToValidUTF8(e.NotReady, "\uFFFD"):
			t.Fatalf("end frame %q decoded to not_ready %q; want %q", line, fr.NotReady, e.NotReady)
		}
		var want []PromptGroup // as the frame should show them: each name once
		for _, g := range e.Prompt {
			g = PromptGroup{Name: strings.ToValidUTF8(g.Name, "\uFFFD"), Text: strings.ToValidUTF8(g.Text, "\uFFFD")}
			if !slices.ContainsFunc(want, func(w PromptGroup) bool { return w.Name == g.Name }) {
				want = append(want, g)
			}
		}
		if len(fr.Prompt) != len(want) {
			t.Fatalf("end frame %q decoded to prompt %q; want %q", line, fr.Prompt, want)
		}
		for _, g := range want {
			if text, ok := fr.Prompt[g.Name]; !ok || text != g.Text {
				t.Fatalf("end frame %q decoded to prompt %q; want %q", line, fr.Prompt, want)
			}
		}
		if got := promptKeys(t, line); !slices.Equal(got, names(want)) {
			t.Fatalf("end frame %q has its prompt's keys in the order %q; want %q", line, got, names(want))
		}
	})
}

func names(gs []PromptGroup) []string {
	var ns []string
	for _, g := range gs {
		ns = append(ns, g.Name)
	}
	return ns
}

// promptKeys returns the keys of the "prompt" object of a frame, in the
// order they come.
func promptKeys(t *testing.T, line []byte) []string {
	t.Helper()
	var frame map[string]json.RawMessage
	if err := json.Unmarshal(line, &frame); err != nil {
		t.Fatal(err)
	}
	raw, ok := frame["prompt"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var keys []string
	for depth := 0; ; {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '{' {
				depth++
			}
		case string:
			if depth == 1 {
				keys = append(keys, tok)
				if _, err := dec.Token(); err != nil { // its value
					t.Fatal(err)
				}
			}
		}
	}
}

// decodeOne decodes line, which must be one line of valid JSON.
func decodeOne(t *testing.T, line []byte) Frame {
	t.Helper()
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("frame is not exactly one line: %q", line)
	}
	if !utf8.Valid(line) || !json.Valid(line) {
		t.Fatalf("frame is not valid JSON in UTF-8: %q", line)
	}
	var fr Frame
	if err := json.Unmarshal(line, &fr); err != nil {
		t.Fatalf("decode frame %q: %v", line, err)
	}
	return fr
}
