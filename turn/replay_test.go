package turn

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// event is one line of a recording (see testdata/record).
type event struct {
	at   time.Duration
	kind string // out, in, type, int or eof
	data []byte
}

// loadRecording reads testdata/NAME.rec.
func loadRecording(tb testing.TB, name string) []event {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".rec"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var evs []event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" || text[0] == '#' {
			continue
		}
		at, rest, ok1 := strings.Cut(text, " ")
		kind, quoted, ok2 := strings.Cut(rest, " ")
		us, err1 := strconv.ParseInt(at, 10, 64)
		data, err2 := strconv.Unquote(quoted)
		if !ok1 || !ok2 || err1 != nil || err2 != nil {
			tb.Fatalf("%s.rec:%d: bad line %q", name, n, text)
		}
		evs = append(evs, event{at: time.Duration(us) * time.Microsecond, kind: kind, data: []byte(data)})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return evs
}

// turnResult is what one turn of a replay gave.
type turnResult struct {
	input      string
	answer     bytes.Buffer
	echo       bytes.Buffer
	ended      bool    // it ended with End
	incomplete bool    // it ended with Incomplete
	groups     []Group // the prompt's groups at End
	status     int     // the status at End, or -1
}

// replay drives a Tracker and checks, as it goes, that the segments give
// back exactly the bytes fed.
type replay struct {
	tb    testing.TB
	tr    *Tracker
	t0    time.Time
	turns []*turnResult
	cur   *turnResult // the turn in progress, or nil
	fed   bytes.Buffer
	got   bytes.Buffer
	kinds []Kind // the kind of every byte handed back, End included
	other map[Kind]*bytes.Buffer
}

func newReplay(tb testing.TB, cfg Config) *replay {
	tb.Helper()
	tr, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return &replay{tb: tb, tr: tr, t0: time.Unix(1_000_000, 0), other: map[Kind]*bytes.Buffer{}}
}

func (r *replay) take(segs []Segment) {
	for _, s := range segs {
		r.got.Write(s.Data)
		for range s.Data {
			r.kinds = append(r.kinds, s.Kind)
		}
		switch s.Kind {
		case End, Incomplete:
			r.kinds = append(r.kinds, s.Kind)
			if r.cur == nil {
				r.tb.Fatalf("%v with no turn in progress", s.Kind)
			}
			r.cur.ended, r.cur.incomplete = s.Kind == End, s.Kind == Incomplete
			r.cur.groups = append([]Group(nil), r.tr.Groups()...)
			if st, ok := r.tr.Status(); ok {
				r.cur.status = st
			}
			r.cur = nil
		case Answer, Echo:
			if r.cur == nil {
				r.tb.Fatalf("%v %q with no turn in progress", s.Kind, s.Data)
			}
			if s.Kind == Answer {
				r.cur.answer.Write(s.Data)
			} else {
				r.cur.echo.Write(s.Data)
			}
		default:
			if r.other[s.Kind] == nil {
				r.other[s.Kind] = new(bytes.Buffer)
			}
			r.other[s.Kind].Write(s.Data)
		}
	}
}

// until ticks the tracker at each deadline up to at.
func (r *replay) until(at time.Time) {
	for i := 0; ; i++ {
		d, ok := r.tr.Deadline()
		if !ok || d.After(at) {
			return
		}
		if i > 1000 {
			r.tb.Fatalf("deadline %v does not move", d)
		}
		r.take(r.tr.Tick(d))
	}
}

func (r *replay) output(p []byte, at time.Time) {
	r.until(at)
	r.fed.Write(p)
	r.take(r.tr.Output(p, at))
}

func (r *replay) begin(input string, quiet time.Duration, at time.Time) {
	r.until(at)
	r.cur = &turnResult{input: input, status: -1}
	r.turns = append(r.turns, r.cur)
	r.take(r.tr.Begin([]byte(input), quiet, at))
}

func (r *replay) abandon(at time.Time) {
	r.until(at)
	r.take(r.tr.Abandon())
	r.cur = nil
}

func (r *replay) eof(at time.Time) {
	r.until(at)
	r.take(r.tr.EOF())
	r.cur = nil
}

// finish ticks until nothing is due and checks the accounting.
func (r *replay) finish() {
	r.until(r.t0.Add(time.Hour))
	if !bytes.Equal(r.fed.Bytes(), r.got.Bytes()) {
		r.tb.Fatalf("segments do not give back the output:\nfed %q\ngot %q", r.fed.Bytes(), r.got.Bytes())
	}
}

// play replays a recording; quiet gives some turns (by index) a quiet time.
func (r *replay) play(evs []event, quiet map[int]time.Duration) {
	for _, e := range evs {
		at := r.t0.Add(e.at)
		switch e.kind {
		case "out":
			r.output(e.data, at)
		case "in":
			r.begin(string(e.data), quiet[len(r.turns)], at)
		case "type":
			r.until(at)
			r.take(r.tr.Typed())
		case "int":
			r.abandon(at)
			if len(e.data) > 0 {
				r.take(r.tr.Typed()) // the "\x03" written to the terminal
			}
		case "eof":
			r.eof(at)
		default:
			r.tb.Fatalf("unknown event %q", e.kind)
		}
	}
	r.finish()
}
