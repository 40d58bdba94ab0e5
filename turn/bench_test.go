package turn

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// BenchmarkTracker measures the tracker's own cost per byte of output:
// one turn of 1 MiB, given in 64 KiB reads as the stream engine reads.
func BenchmarkTracker(b *testing.B) {
	line := strings.Repeat("0123456789", 7) + "abcdefgh\n"
	ttyLine := "\x1b[01;34mdirectory\x1b[0m  \x1b[01;32mprogram\x1b[0m  " + strings.Repeat("word ", 10) + "\r\n"
	for _, c := range []struct {
		name, unit, input string
		tty               bool
	}{
		{"pipe-lines", line, "x\n", false},
		{"terminal-lines", ttyLine, "x\n", true},
		{"one-long-line", "x", "x\n", false},
		{"pipe-lines-owed-prompts", line, "a\nb\nc\n", false}, // prompts owed, never shown
	} {
		b.Run(c.name, func(b *testing.B) {
			out := bytes.Repeat([]byte(c.unit), (1<<20)/len(c.unit))
			benchTurn(b, out, c.input, c.tty)
		})
	}
}

func benchTurn(b *testing.B, out []byte, input string, tty bool) {
	tr, err := New(Config{Prompt: regexp.MustCompile(`^>>> $`), Terminal: tty})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Unix(0, 0)
	tr.Output([]byte(">>> "), now)
	now = now.Add(time.Second)
	tr.Tick(now)
	answered := 0
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tr.Begin([]byte(input), 0, now)
		for p := out; len(p) > 0; {
			n := min(len(p), 64<<10)
			for _, s := range tr.Output(p[:n], now) {
				if s.Kind == Answer {
					answered += len(s.Data)
				}
			}
			p = p[n:]
		}
		tr.Output([]byte("\n>>> "), now)
		now = now.Add(time.Second)
		for _, s := range tr.Tick(now) {
			answered += len(s.Data)
		}
		if !tr.Ready() {
			b.Fatal("the turn did not end")
		}
	}
	if answered == 0 {
		b.Fatal("no answer")
	}
}
