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
		requireWholeIfTaken(t, line, err)
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
		b, err := ParseAsk(lines(WireLine(back))[0])
		if err != nil || b != a {
			t.Fatalf("%q round-tripped to %+v, %v; want %+v", line, b, err, a)
		}
	})
}

// TestEndFrames: the end frame says how the turn ended, with the prompt's
// groups in their order and the status as a number.
func TestEndFrames(t *testing.T) {
	seven := 7
	for _, c := range []struct {
		end  End
		want string
	}{
		{End{DurationMS: 3}, `{"id":"a1","type":"end","ready":true,"duration_ms":3}` + "\n"},
		{End{TimedOut: true, DurationMS: 3}, `{"id":"a1","type":"end","timed_out":true,"duration_ms":3}` + "\n"},
		{End{TimedOut: true, Queued: true, DurationMS: 3}, `{"id":"a1","type":"end","timed_out":true,"queued":true,"duration_ms":3}` + "\n"},
		{End{Incomplete: true, DurationMS: 3}, `{"id":"a1","type":"end","incomplete":true,"duration_ms":3}` + "\n"},
		{End{Prompt: []PromptGroup{{"status", "7"}, {"cwd", "/src"}}, Status: &seven, DurationMS: 3},
			`{"id":"a1","type":"end","ready":true,"status":7,"prompt":{"status":"7","cwd":"/src"},"duration_ms":3}` + "\n"},
		{End{Prompt: []PromptGroup{{"x", "a\"b"}, {"x", "dropped"}, {"y", ""}}, DurationMS: 0},
			`{"id":"a1","type":"end","ready":true,"prompt":{"x":"a\"b","y":""},"duration_ms":0}` + "\n"},
		{End{TimedOut: true, NotReady: `no prompt; its last line is ">>> "`, DurationMS: 1000},
			`{"id":"a1","type":"end","timed_out":true,"not_ready":"no prompt; its last line is \">>> \"","duration_ms":1000}` + "\n"},
	} {
		if got := string(AppendEnd(nil, "a1", c.end)); got != c.want {
			t.Errorf("AppendEnd(%+v) = %s; want %s", c.end, got, c.want)
		}
	}
	var f Frame
	if err := json.Unmarshal(AppendEnd(nil, "a1", End{Prompt: []PromptGroup{{"status", "7"}}, Status: &seven}), &f); err != nil ||
		f.Status == nil || *f.Status != 7 || f.Prompt["status"] != "7" || !f.Ready {
		t.Errorf("decoded to %+v, %v", f, err)
	}
}
