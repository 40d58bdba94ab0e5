package turn

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The fuzz input is a program for a Tracker. Its first byte is the
// configuration: bit 0 terminal mode, bits 1-2 the echo mode, bits 3-5 the
// prompt (fuzzPrompts), bit 6 its continuation prompt too, bit 7 a settle
// period of SettleAtOnce. Then come operations, one byte each, the low
// three bits saying which and the high five an argument A:
//
//	0-2  output: a length byte and that many bytes, A ms after the last
//	     operation, without ticking on the way (a late timer)
//	3    move the clock on A ms, ticking at every deadline on the way
//	4    begin a turn: a length byte and the input, quiet time 3A ms
//	5    abandon the turn
//	6    typed input
//	7    EOF when A is 0, Tick at the current time when A is below 16,
//	     else Settle at the current time
const (
	opOutput  = 0
	opAdvance = 3
	opBegin   = 4
	opAbandon = 5
	opTyped   = 6
	opTick    = 7
	argSettle = 16
)

// fuzzPrompts are the prompts a program may use, each with the
// continuation prompt it may add (the first also matches its
// continuation prompt, which then wins).
var fuzzPrompts = []struct{ prompt, cont string }{
	{`^(>>>|\.\.\.) $`, `^\.\.\. $`},
	{`(?:\[(?P<status>\d*)\] )?\$ $`, `^> $`},
	{`^$`, `^\.\.\. $`},
	{`^[$>] $`, `^> $`},
	{`^(?P<db>sqlite|   \.\.\.)> $`, `^   \.\.\.> $`},
	{`x`, `y`},
	{`^(?P<a>.*)(?P<a>>) $`, `^\.\.\. $`},
	{`^\[(?P<status>\d+)\|[^]]*\] \$ $`, `^> $`}, // a shell's, with $? and a working directory of any length
}

// fuzzConfig is the configuration a program's first byte gives.
func fuzzConfig(b byte) Config {
	p := fuzzPrompts[int(b>>3&7)%len(fuzzPrompts)]
	cfg := Config{Terminal: b&1 != 0, Echo: EchoMode(b >> 1 & 3 % 3), Prompt: regexp.MustCompile(p.prompt)}
	if b&(1<<6) != 0 {
		cfg.Continuation = regexp.MustCompile(p.cont)
	}
	if b&(1<<7) != 0 {
		cfg.Settle = SettleAtOnce
	}
	return cfg
}

// fuzzRun is what one run of a program gave.
type fuzzRun struct {
	kinds []Kind // every byte's kind, End in its place
	fed   []byte
	got   []byte
}

// runProgram runs data; with split, every output is given in pieces.
func runProgram(t *testing.T, data []byte, split bool) fuzzRun {
	if len(data) == 0 {
		return fuzzRun{}
	}
	cfg := fuzzConfig(data[0])
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &fuzzHarness{t: t, tr: tr, cfg: cfg, split: split, now: time.Unix(1000, 0), seed: uint32(len(data))}
	for i := 1; i < len(data); {
		op, arg := data[i]&7, time.Duration(data[i]>>3)
		i++
		var payload []byte
		if op <= 2 || op == opBegin {
			n := 0
			if i < len(data) {
				n = int(data[i])
				i++
			}
			payload = data[i:min(i+n, len(data))]
			i += len(payload)
		}
		h.do(op, arg, payload, split)
	}
	h.advance(time.Hour)
	h.do(opTick, 0, nil, split) // EOF: what is held is given back
	if !bytes.Equal(h.run.fed, h.run.got) {
		t.Fatalf("the segments do not give back the output:\nfed %q\ngot %q", h.run.fed, h.run.got)
	}
	return h.run
}

type fuzzHarness struct {
	t      *testing.T
	tr     *Tracker
	cfg    Config
	split  bool // output in pieces, and AtPrompt asked between them
	now    time.Time
	seed   uint32
	open   bool // a turn is open: Begin, and no End, Abandon or EOF since
	answer []byte
	run    fuzzRun

	readies    int // Readies after the last operation
	incomplete int // turns ended Incomplete
}

func (h *fuzzHarness) do(op byte, arg time.Duration, payload []byte, split bool) {
	switch op {
	case 0, 1, 2:
		h.now = h.now.Add(arg * time.Millisecond)
		h.output(payload, split)
	case opAdvance:
		h.advance(arg * time.Millisecond)
	case opBegin:
		h.closeTurn()
		h.take(h.tr.Begin(payload, 3*arg*time.Millisecond, h.now))
		h.open = h.tr.InTurn()
	case opAbandon:
		h.take(h.tr.Abandon())
		h.closeTurn()
	case opTyped:
		h.take(h.tr.Typed())
	case opTick:
		switch {
		case arg == 0:
			h.take(h.tr.EOF())
			h.closeTurn()
		case arg < argSettle:
			h.take(h.tr.Tick(h.now))
		default:
			h.settle()
		}
	}
	if h.open != h.tr.InTurn() {
		h.t.Fatalf("InTurn %v, but the segments say %v", h.tr.InTurn(), h.open)
	}
	h.checkShown()
}

// settle calls Settle, and checks that it takes a prompt AtPrompt saw: the
// child is then ready, or its turn ended as incomplete.
func (h *fuzzHarness) settle() {
	at := h.tr.AtPrompt()
	readies, ended := h.tr.Readies(), h.incomplete
	h.take(h.tr.Settle(h.now))
	if h.tr.AtPrompt() || h.tr.Unfinished() {
		h.t.Fatal("AtPrompt or Unfinished after Settle")
	}
	if at && !h.tr.Ready() && h.incomplete == ended && !h.tr.Closed() {
		h.t.Fatalf("Settle did not take the prompt AtPrompt saw (readies %d, now %d)", readies, h.tr.Readies())
	}
}

// checkShown checks what the tracker tells of what the child showed: its
// last line shows no escape, "\r" or "\n" and is short; the prompt's
// groups are named groups of the expression; the count of readies grows
// only as the child becomes ready.
func (h *fuzzHarness) checkShown() {
	last := h.tr.LastLine()
	if len(last) > MaxLastLine || bytes.ContainsAny(last, "\x1b\r\n") {
		h.t.Fatalf("last line %q", last)
	}
	n := h.tr.Readies()
	if n < h.readies || n > h.readies+1 || n == h.readies+1 && !h.tr.Ready() && !h.tr.Closed() {
		h.t.Fatalf("readies went from %d to %d (ready %v)", h.readies, n, h.tr.Ready())
	}
	h.readies = n
	names := strings.Join(h.cfg.Prompt.SubexpNames(), " ")
	for _, g := range h.tr.Groups() {
		if g.Name == "" || !strings.Contains(" "+names+" ", " "+g.Name+" ") {
			h.t.Fatalf("group %q is no named group of %v", g.Name, h.cfg.Prompt)
		}
	}
	if st, ok := h.tr.Status(); ok && (st < 0 || len(h.tr.Groups()) == 0) {
		h.t.Fatalf("status %d from groups %q", st, h.tr.Groups())
	}
}

// output gives p whole or, with split, in pieces of pseudo-random sizes,
// all at the same time.
func (h *fuzzHarness) output(p []byte, split bool) {
	orig := append([]byte(nil), p...)
	h.run.fed = append(h.run.fed, p...)
	for len(p) > 0 {
		n := len(p)
		if split {
			h.seed = h.seed*1664525 + 1013904223
			n = min(n, 1+int(h.seed>>24)%7)
		}
		h.take(h.tr.Output(p[:n], h.now))
		p = p[n:]
		if split && h.seed%8 == 0 && h.tr.AtPrompt() && h.tr.Unfinished() { // they change nothing: the whole run does not ask
			h.t.Fatal("both AtPrompt and Unfinished")
		}
	}
	if !bytes.Equal(orig, h.run.fed[len(h.run.fed)-len(orig):]) {
		h.t.Fatal("Output changed its argument")
	}
	if held := len(h.run.fed) - len(h.run.got); held >= MaxHold {
		h.t.Fatalf("%d bytes held", held)
	}
}

func (h *fuzzHarness) advance(d time.Duration) {
	end := h.now.Add(d)
	for range 100 {
		dl, ok := h.tr.Deadline()
		if !ok || dl.After(end) {
			break
		}
		if dl.After(h.now) {
			h.now = dl
		}
		at, armed := h.tr.AtPrompt(), h.tr.armed
		readies, ended := h.tr.Readies(), h.incomplete
		h.take(h.tr.Tick(h.now))
		if at && h.tr.Readies() == readies && h.incomplete == ended {
			h.t.Fatal("AtPrompt saw a prompt its deadline did not take")
		}
		if armed && !h.tr.armed && h.tr.InTurn() && h.tr.unfinished() {
			h.t.Fatalf("the settle period passed and the turn still holds %q", h.tr.ln.vis())
		}
	}
	h.now = end
}

func (h *fuzzHarness) take(segs []Segment) {
	for _, s := range segs {
		if (len(s.Data) == 0) != s.Kind.ends() {
			h.t.Fatalf("segment %v with %d bytes", s.Kind, len(s.Data))
		}
		h.run.got = append(h.run.got, s.Data...)
		for range s.Data {
			h.run.kinds = append(h.run.kinds, s.Kind)
		}
		switch s.Kind {
		case Answer, Echo:
			if !h.open {
				h.t.Fatalf("%v %q outside a turn", s.Kind, s.Data)
			}
			if s.Kind == Answer {
				h.answer = append(h.answer, s.Data...)
			}
		case End, Incomplete:
			if !h.open {
				h.t.Fatalf("%v outside a turn", s.Kind)
			}
			if s.Kind == Incomplete && h.cfg.Continuation == nil {
				h.t.Fatal("Incomplete without a continuation prompt")
			}
			if s.Kind == Incomplete {
				h.incomplete++
			}
			h.run.kinds = append(h.run.kinds, s.Kind)
			h.closeTurn()
		case Noise, Prompt, Discarded:
		default:
			h.t.Fatalf("unknown kind %v", s.Kind)
		}
	}
}

// closeTurn checks the answer of the turn that ends.
func (h *fuzzHarness) closeTurn() {
	if h.cfg.Terminal && (bytes.IndexByte(h.answer, 0x1b) >= 0 || bytes.Contains(h.answer, []byte("\r\n"))) {
		h.t.Fatalf("terminal answer %q has an escape or \"\\r\\n\"", h.answer)
	}
	h.open, h.answer = false, h.answer[:0]
}

// FuzzTracker checks, for any output, input and timing, that the tracker
// gives back exactly the bytes it was given, in order, each once, by the
// time EOF returns (the transcript is never lost or added to); that how the output is cut into
// calls changes no byte's kind nor where a turn ends; that answers and
// echo come only inside a turn; that a terminal answer holds no escape and
// no "\r\n"; that Output leaves its argument alone; and that no more than
// MaxHold bytes are ever held.
func FuzzTracker(f *testing.F) {
	for _, seed := range recordingSeeds(f) {
		f.Add(seed)
	}
	f.Add([]byte{1, opOutput, 4, '>', '>', '>', ' ', opAdvance | 31<<3, opBegin, 2, 'x', '\n',
		opOutput, 9, 'x', '\r', '\n', 0x1b, '[', '1', 'm', 'y', '\r', opOutput | 31<<3, 0})
	f.Add(longPromptSeed())
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := runProgram(t, data, false)
		split := runProgram(t, data, true)
		if !kindsEqual(whole.kinds, split.kinds) {
			t.Fatalf("cutting the output differently changed its kinds:\nwhole %v\nsplit %v", whole.kinds, split.kinds)
		}
	})
}

func kindsEqual(a, b []Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// recordingSeeds turns every recording into a program.
func recordingSeeds(tb testing.TB) [][]byte {
	names, err := filepath.Glob(filepath.Join("testdata", "*.rec"))
	if err != nil || len(names) == 0 {
		tb.Fatalf("no recordings: %v", err)
	}
	var seeds [][]byte
	for _, name := range names {
		base := strings.TrimSuffix(filepath.Base(name), ".rec")
		prompt := 0
		switch {
		case strings.HasPrefix(base, "sqlite"):
			prompt = 4
		case strings.HasPrefix(base, "bc"):
			prompt = 2
		case strings.HasSuffix(base, "status") || base == "bash-pipe":
			prompt = 1
		case strings.HasPrefix(base, "bash") || strings.HasPrefix(base, "ash"):
			prompt = 3
		}
		cfg := byte(prompt << 3)
		if strings.HasSuffix(base, "tty") || base == "bash-xterm" || base == "bash-dumb" {
			cfg |= 1
		}
		if strings.Contains(base, "cont") || strings.HasSuffix(base, "status") || base == "bash-pipe" {
			cfg |= 1 << 6
		}
		seeds = append(seeds, encodeRecording(loadRecording(tb, base), cfg))
	}
	return seeds
}

// encodeRecording writes a recording as a program, its times to the
// millisecond.
func encodeRecording(evs []event, cfg byte) []byte {
	prog := []byte{cfg}
	var last time.Duration
	for _, e := range evs {
		gap := (e.at - last) / time.Millisecond
		last += gap * time.Millisecond
		for ; gap > 31; gap -= 31 {
			prog = append(prog, opAdvance|31<<3)
		}
		switch e.kind {
		case "out":
			for p := e.data; len(p) > 0; gap = 0 {
				n := min(len(p), 255)
				prog = append(prog, opOutput|byte(gap)<<3, byte(n))
				prog = append(prog, p[:n]...)
				p = p[n:]
			}
		case "in":
			prog = append(prog, opAdvance|byte(gap)<<3, opBegin, byte(min(len(e.data), 255)))
			prog = append(prog, e.data[:min(len(e.data), 255)]...)
		case "type":
			prog = append(prog, opAdvance|byte(gap)<<3, opTyped)
		case "int":
			prog = append(prog, opAdvance|byte(gap)<<3, opAbandon)
		case "eof":
			prog = append(prog, opAdvance|byte(gap)<<3, opTick)
		}
	}
	return prog
}

// TestFuzzSeeds runs the seeds in both ways, as the fuzz target does,
// and checks the encoding of a recording keeps its answers.
func TestFuzzSeeds(t *testing.T) {
	seeds := recordingSeeds(t)
	for i, seed := range seeds {
		whole := runProgram(t, seed, false)
		split := runProgram(t, seed, true)
		if !kindsEqual(whole.kinds, split.kinds) {
			t.Errorf("seed %d: kinds differ when split", i)
		}
		if len(whole.fed) == 0 {
			t.Errorf("seed %d: no output", i)
		}
	}
	if os.Getenv("TURN_DUMP_SEEDS") != "" {
		fmt.Println(len(seeds), "seeds")
	}
}

// longPromptSeed is a program for the shell's prompt with $? and a long
// working directory (fuzzPrompts[7]), on a terminal: a question handed on
// once quiet, typed input, then "foo" without a newline, handed on, and a
// prompt of 200 bytes after it.
func longPromptSeed() []byte {
	out := func(gap byte, s string) []byte { return append([]byte{opOutput | gap<<3, byte(len(s))}, s...) }
	prog := []byte{1 | 7<<3}
	prog = append(prog, out(0, "[0|/] $ ")...)
	input := "read -p 'Q: '\n"
	prog = append(prog, opAdvance|31<<3, opBegin, byte(len(input)))
	prog = append(prog, input...)
	prog = append(prog, out(1, "read -p 'Q: '\r\nQ: ")...)
	prog = append(prog, opAdvance|31<<3, opTyped)
	prog = append(prog, out(1, "bob\r\nfoo")...)
	prog = append(prog, opAdvance|31<<3)
	prog = append(prog, out(1, "[0|/a/long/working/dir/"+strings.Repeat("x", 170)+"] $ ")...)
	return append(prog, opAdvance|31<<3)
}
