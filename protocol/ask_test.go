package protocol

import (
	"encoding/json"
	"testing"
	"time"
)

func TestParseAsk(t *testing.T) {
	a, err := ParseAsk([]byte(`{"id":"a1","reply":"r.1","input":"print(1)","timeout":"5s","quiet":"200ms"}`))
	if err != nil || a.ID != "a1" || a.Reply != "r.1" || a.Input != "print(1)" || a.Limit != 5*time.Second || a.Quiet != 200*time.Millisecond {
		t.Fatalf("got %+v, %v", a, err)
	}
	for _, bad := range []string{
		`{"id":"a","reply":"r","input":"x","timeout":"-1s"}`,
		`{"id":"a","reply":"r","input":"x","quiet":"soon"}`,
		`{"id":"a","input":"x"}`,
		`{"id":"a","reply":"..","input":"x"}`,
		`{"id":"a","reply":"r","input":7}`,
		`print(1)`,
	} {
		if _, err := ParseAsk([]byte(bad)); err == nil {
			t.Errorf("ParseAsk(%s) accepted it", bad)
		}
	}
	a, _ = ParseAsk([]byte(`{"id":"keep","reply":"mine","input":7}`))
	if a.ID != "keep" || a.Reply != "mine" {
		t.Errorf("a bad ask lost its head: %+v", a)
	}
}

// FuzzParseAsk checks that no line makes ParseAsk panic or return an id
// or reply name it must not, and that what it accepts round-trips.
func FuzzParseAsk(f *testing.F) {
	for _, seed := range []string{
		`{"id":"a1","reply":"r","input":"print(6*7)","timeout":"5s","quiet":"200ms"}`,
		`{"id":"a1","reply":"r","input":"\u0003"}`,
		`{"id":"a1","reply":".","input":""}`,
		`{"reply":"r","input":"x","timeout":"0s"}`,
		`{"id":"cut","reply":"mine","input":"hello wor`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		a, err := ParseAsk(line)
		if len(a.ID) > MaxIDLen {
			t.Fatalf("id of %d bytes returned (err %v)", len(a.ID), err)
		}
		if a.Reply != "" && !ValidReplyName(a.Reply) {
			t.Fatalf("invalid reply name %q returned (err %v)", a.Reply, err)
		}
		if err != nil {
			return
		}
		if a.Reply == "" || a.Limit < 0 || a.Quiet < 0 {
			t.Fatalf("line %q accepted as %+v", line, a)
		}
		back, err := json.Marshal(a.Ask)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseAsk(back)
		if err != nil || b != a {
			t.Fatalf("%q round-tripped to %+v, %v; want %+v", line, b, err, a)
		}
	})
}
