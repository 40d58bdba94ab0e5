package turn

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// want is what one turn of a recording must give.
type want struct {
	answer string
	ended  bool // ended with End (not interrupted, not ended by the child's exit)
}

func ended(answer string) want { return want{answer: answer, ended: true} }

// upTo is the numbers 0 to n-1, a line each.
func upTo(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	return b.String()
}

const (
	pyPrompt     = `^(>>>|\.\.\.) $`
	shPrompt     = `^[$>] $`
	sqlitePrompt = `^(sqlite|   \.\.\.)> $`
	longWord     = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"
	traceback    = "Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nZeroDivisionError: division by zero\n"
	pow2to1000   = "10715086071862673209484250490600018105614048117055336074437503883703\\\n" +
		"51051124936122493198378815695858127594672917553146825187145285692314\\\n" +
		"04359845775746985748039345677748242309854210746050623711418779541821\\\n" +
		"53046474983581941267398767559165543946077062914571196477686542167660\\\n" +
		"429831652624386837205668069376\n"
)

// pythonWants is what python3 answers to the script of record's
// pythonSteps, on pipes and on a terminal alike; turn 5 (input()) ends by
// its quiet time, turn 7 is interrupted, the child exits in turn 11.
func pythonWants() []want {
	return []want{
		ended("42\n"),
		ended(traceback),
		ended("0\n1\n2\n"),
		ended(">>> more\n"), // a line like the prompt, then more before the quiet period
		ended(upTo(2000)),
		ended("name? "),
		ended("'bob'\n"),
		{},
		ended("after\n"),
		ended(""), // "tick" comes between turns
		ended(strings.Repeat("x", 200) + "\n"),
		{},
	}
}

// shellWants is what a shell answers to record's shellSteps; bg is the
// answer to the background job's start ("-": there is none), done the
// job's end as the shell reports it with the next command, exit what the
// shell says as it exits.
func shellWants(errLine, bg, done, exit string) []want {
	w := []want{
		ended("42\n"),
		ended("1\n2\n3\n"),
		ended("yes\n"),
		ended("$ more\n"),
		ended(errLine),
		{},
		ended("after\n"),
	}
	if bg != "-" {
		w = append(w, ended(bg))
	}
	return append(w, ended(longWord+"\n"+done), ended("a\tbbold\n"), want{answer: exit})
}

func sqliteWants(echo string) []want {
	return []want{
		ended(echo + "42\n"),
		ended(""),
		ended(""),
		ended("1|one\n2|two\n"),
		ended("2|two\n"),
		ended("Parse error: near \"selec\": syntax error\n  selec 1;\n  ^--- error here\n"),
		{},
	}
}

func bcWants() []want {
	return []want{
		ended("42\n"),
		ended("Runtime error (func=(main), adr=3): Divide by zero\n"),
		ended("3.14159265358979323844\n"),
		ended("0\n1\n2\n"),
		ended(pow2to1000),
		{},
	}
}

// TestRecordings replays the recorded output of real programs through a
// Tracker, with the recorded chunks and times, and checks every answer.
func TestRecordings(t *testing.T) {
	bashDone := "[1]+  Done                    ( sleep 0.3; echo tick )\n"
	bashErr := "ls: cannot access '/nonexistent-dir': No such file or directory\n"
	ashErr := "ls: /nonexistent-dir: No such file or directory\n"
	for _, c := range []struct {
		name, rec, prompt string
		tty               bool
		echo              EchoMode
		quiet             map[int]time.Duration
		wants             []want
		discarded         []string // must be in what no turn got
		prompts           string   // must be among the prompts
	}{
		{name: "python-pipe", prompt: pyPrompt, quiet: map[int]time.Duration{5: 100 * time.Millisecond},
			wants: pythonWants(), discarded: []string{"tick\n", "KeyboardInterrupt\n"}},
		{name: "python-tty", prompt: pyPrompt, tty: true, quiet: map[int]time.Duration{5: 100 * time.Millisecond},
			wants: pythonWants(), discarded: []string{"tick\r\n", "^C", "KeyboardInterrupt\r\n"}},
		{name: "sqlite-pipe", prompt: sqlitePrompt, wants: sqliteWants("")},
		{name: "sqlite-pipe-echo", rec: "sqlite-pipe", prompt: sqlitePrompt, echo: EchoOn, wants: sqliteWants("")},
		{name: "sqlite-pipe-echo-off", rec: "sqlite-pipe", prompt: sqlitePrompt, echo: EchoOff, wants: sqliteEchoKept()},
		{name: "sqlite-tty", prompt: sqlitePrompt, tty: true, wants: sqliteWants("")},
		{name: "bash-xterm", prompt: shPrompt, tty: true, wants: shellWants(bashErr, "[1] 1107\n", bashDone, "exit\n"),
			discarded: []string{"tick\r\n", "^C"}},
		{name: "bash-dumb", prompt: shPrompt, tty: true, wants: shellWants(bashErr, "[1] 1416\n", bashDone, "exit\n"),
			discarded: []string{"tick\r\n", "^C"}},
		{name: "ash-tty", prompt: shPrompt, tty: true,
			wants:     shellWants(ashErr, "", "[1]+  Done                       (sleep 0.3; echo tick)\n", ""),
			discarded: []string{"tick\r\n", "^C"}, prompts: "$ \x1b[6n"},
		{name: "ash-pipe", prompt: shPrompt, wants: ashPipeWants(ashErr)},
		{name: "bc-pipe", prompt: `^$`, wants: bcWants()},
		{name: "bc-tty", prompt: `^$`, tty: true, wants: bcWants()},
		{name: "bc-pipe-quiet", rec: "bc-pipe", prompt: `^no prompt$`, wants: bcWants(),
			quiet: map[int]time.Duration{0: 50 * time.Millisecond, 1: 50 * time.Millisecond, 2: 50 * time.Millisecond,
				3: 50 * time.Millisecond, 4: 50 * time.Millisecond}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := c.rec
			if rec == "" {
				rec = c.name
			}
			r := newReplay(t, Config{Prompt: regexp.MustCompile(c.prompt), Terminal: c.tty, Echo: c.echo})
			r.play(loadRecording(t, rec), c.quiet)
			checkTurns(t, r, c.wants)
			if !strings.Contains(r.other[Prompt].String(), c.prompts) {
				t.Errorf("%q is not among the prompts %q", c.prompts, r.other[Prompt].String())
			}
			discarded := r.other[Discarded].String()
			for _, d := range c.discarded {
				if !strings.Contains(discarded, d) {
					t.Errorf("%q is not among the discarded output %q", d, discarded)
				}
			}
		})
	}
}

// sqliteEchoKept: sqlite3 -interactive echoes its input itself; with
// EchoOff the echo stays in the answer (the continuation prompts go: they
// are the prompts the child shows for the input's later lines). With
// EchoAuto the tracker learns from the first turn that the child echoes.
func sqliteEchoKept() []want {
	w := sqliteWants("select 6*7;\n")
	w[1] = ended("create table t(a, b);\n")
	w[2] = ended("insert into t values (1, 'one'), (2, 'two');\n")
	w[3] = ended("select * from t;\n1|one\n2|two\n")
	w[4] = ended("select * from\nt\nwhere a = 2;\n2|two\n")
	w[5] = ended("selec 1;\n" + w[5].answer)
	w[6] = want{answer: ".quit\n"}
	return w
}

// ashPipeWants: on pipes busybox ash has no background job (see record's
// shellSteps), and answers keep their escape sequences and "\r".
func ashPipeWants(errLine string) []want {
	w := shellWants(errLine, "-", "", "")
	w[8] = ended("a\tb\x1b[1mbold\x1b[0m\r\n")
	return w
}

func checkTurns(t *testing.T, r *replay, wants []want) {
	t.Helper()
	if len(r.turns) != len(wants) {
		t.Fatalf("%d turns, want %d", len(r.turns), len(wants))
	}
	for i, w := range wants {
		got := r.turns[i]
		if got.answer.String() != w.answer || got.ended != w.ended {
			t.Errorf("turn %d %q: answer %q (ended %v), want %q (ended %v)",
				i, got.input, got.answer.String(), got.ended, w.answer, w.ended)
		}
	}
}
