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

// BenchmarkLongLineLooked measures what the conversation asks of the
// tracker as a line of 1 MiB with no newline comes in reads of 4,000
// bytes: the tracker's Output and, after each, AtPrompt and Unfinished,
// which look for the prompt at the end of the whole line so far
// (backwards for a prompt anchored at both ends, forwards otherwise);
// then the line ends, with a newline or with the prompt, which is then
// matched against all of it.
func BenchmarkLongLineLooked(b *testing.B) {
	for _, c := range []struct{ name, prompt string }{
		{"anchored", `^\[(?P<status>\d+)\|[^]]*\] \$ $`},
		{"anchored-dot-star", `^.*\$ $`},
		{"unanchored", `\$ $`},
	} {
		for _, end := range []string{"newline", "prompt"} {
			b.Run(c.name+"-"+end, func(b *testing.B) {
				last := "[0|/] $ "
				if end == "newline" {
					last = "\n" + last
				}
				benchLongLine(b, c.prompt, last)
			})
		}
	}
}

func benchLongLine(b *testing.B, prompt, last string) {
	tr, err := New(Config{Prompt: regexp.MustCompile(prompt)})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Unix(0, 0)
	tr.Output([]byte("[0|/] $ "), now)
	now = now.Add(time.Second)
	tr.Tick(now)
	read := bytes.Repeat([]byte("0123456789"), 400)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tr.Begin([]byte("x\n"), 0, now)
		for range (1 << 20) / len(read) {
			tr.Output(read, now)
			if tr.AtPrompt() || tr.Unfinished() && tr.ln.n == 0 {
				b.Fatal("a prompt, or unfinished with nothing held")
			}
		}
		tr.Output([]byte(last), now)
		now = now.Add(time.Second)
		tr.Tick(now)
		if !tr.Ready() {
			b.Fatal("the turn did not end")
		}
	}
}
