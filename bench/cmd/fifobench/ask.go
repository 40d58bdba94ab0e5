//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	askMetric     = "one `print(1)` to python3 and its answer, p50 (ms)"
	askFloor      = "python3 -i on pipes"              // driven by the harness itself: the floor
	askKept       = "kept-open client (client.Asker)"  // the agent of askBridge, asked in-process
	askKeptBefore = askKept + before                   // the same, the agent being -before's binary
	askPexpect    = "pexpect replwrap"                 // pexpect.replwrap.python() on a terminal
	askBridge     = "fifobridge ask"                   // run -prompt ... -stderr out -- python3 -i -q
	askSendCat    = "fifobridge send to exec-mode cat" // run -mode exec -- cat: the contract's yardstick
	askExec       = "fifobridge send, python3 -c"      // run -mode exec -allow-args -- python3 -c
	askQuestion   = "print(1)"
	askAnswer     = "1\n"
	pyPrompt      = ">>> "
	pyPrompts     = `^(>>>|\.\.\.) $`
)

// askKeptSess is a client.Asker of a session of python3 -i on a sessions
// agent (askSessArgs), asked in-process.
const askKeptSess = "kept-open client of a session (client.Asker)"

// askContenders are the ways of asking python3 one thing, floor first,
// and the exec-mode cat that `ask` is held against; with -before, the
// kept-open client also asks an agent of that binary.
var askContenders = []string{askFloor, askKept, askKeptBefore, askKeptSess, askPexpect, askBridge, askSendCat, askExec}

// The arguments of the two agents after -dir and -log-level. The stop
// signal is TERM, not -prompt's HUP: the harness may run under nohup,
// whose ignored HUP the agent rightly hands on to python3, which would
// then only end at -stop-timeout.
func askArgs(b *bench) []string {
	return []string{"-prompt", pyPrompts, "-stderr", "out", "-stop-signal", "TERM", "--", b.tools["python3"], "-i", "-q"}
}

// The arguments of the sessions agent of askKeptSess: every session
// python3 -i, as askArgs's child.
func askSessArgs(b *bench) []string { return append([]string{"-mode", "sessions"}, askArgs(b)...) }

func pyExecArgs(b *bench) []string {
	return []string{"-mode", "exec", "-allow-args", "--", b.tools["python3"], "-c"}
}

func catExecArgs(b *bench) []string { return []string{"-mode", "exec", "--", b.tools["cat"]} }

// askPart times, one at a time, b.asks questions `print(1)` to python3
// and their answers, each checked: `fifobridge ask` to an agent holding a
// conversation with `python3 -i -q` on pipes, the same agent asked by a
// client.Asker in the harness (FIFOs kept open), a client.Asker of a
// session of the same python3 on a sessions agent, pexpect's replwrap
// driving python3 on a terminal (timed in its own script), `fifobridge
// send` to an exec-mode agent that runs `python3 -c print(1)` per request,
// `fifobridge send print(1)` to an exec-mode cat (the contract holds
// `ask` against it), and the floor, `python3 -i -q` on a pair of pipes
// that the harness writes the line into and reads up to the next prompt
// from. The `fifobridge ask` and `send` figures include starting the
// process, as a script pays it. At each spacing of b.askGaps but 0
// (back to back), the contenders of a REPL kept open (askSpaced) ask
// again, each question that long after the last answer, as an agent's
// harness asks: the floor and the kept-open client wait in the harness,
// pexpect's driver in its own script.
func askPart(b *bench, round int, r *results) error {
	r.askGaps = b.askGaps
	for _, gap := range b.askGaps {
		names := askContenders
		if gap > 0 {
			names = askSpaced
		}
		for _, name := range rotate(b.have(names, r), round) {
			ms, err := b.askRuns(name, gap)
			if err != nil {
				return fmt.Errorf("%s, %s apart: %w", name, gap, err)
			}
			r.add(askMetricAt(gap), name, percentile(ms, 50))
		}
	}
	return nil
}

// askSpaced are the contenders asked again at each spacing but 0: those
// that keep one REPL for all their questions, where a wait between two
// costs what idling costs.
var askSpaced = []string{askFloor, askKept, askKeptBefore, askKeptSess, askPexpect}

// askMetricAt is the ask part's metric at spacing gap: askMetric back to
// back.
func askMetricAt(gap time.Duration) string {
	if gap == 0 {
		return askMetric
	}
	return fmt.Sprintf("one `print(1)` to python3 and its answer, asked %s after the last, p50 (ms)", gap)
}

// askRuns asks through contender name once uncounted, then b.asks times,
// each gap after the answer before, and returns each time in ms.
func (b *bench) askRuns(name string, gap time.Duration) (ms []float64, err error) {
	a, err := b.newAsker(name, gap)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := a.close(); err == nil {
			err = cerr
		}
	}()
	ms = make([]float64, 0, b.asks)
	for i := -1; i < b.asks; i++ {
		got, took, err := a.ask()
		if err != nil {
			return nil, err
		}
		if got != a.want {
			return nil, fmt.Errorf("answer %q, want %q", got, a.want)
		}
		if i >= 0 {
			ms = append(ms, float64(took.Microseconds())/1e3)
		}
	}
	return ms, nil
}

// asker is a started contender of the ask part: ask waits its spacing,
// asks print(1) and returns the answer and how long the question took (not
// the wait); want is the right answer; close stops what it started.
type asker struct {
	ask   func() (string, time.Duration, error)
	want  string
	close func() error
}

// harnessTimed makes ask an asker's ask, timed by the harness.
func harnessTimed(ask func() (string, error)) func() (string, time.Duration, error) {
	return timedAfter(0, ask)
}

// timedAfter is harnessTimed with the harness sleeping gap before each ask
// (untimed).
func timedAfter(gap time.Duration, ask func() (string, error)) func() (string, time.Duration, error) {
	return func() (string, time.Duration, error) {
		time.Sleep(gap)
		begin := time.Now()
		got, err := ask()
		return got, time.Since(begin), err
	}
}

// newAsker starts contender name, asking gap after each answer, and
// waits until it answers.
func (b *bench) newAsker(name string, gap time.Duration) (*asker, error) {
	switch name {
	case askFloor:
		return b.startREPL(gap)
	case askPexpect:
		return b.startPexpect(gap)
	}
	rn, err := b.start(name, unpinned)
	if err != nil {
		return nil, err
	}
	switch name {
	case askKept, askKeptBefore:
		return startKeptConversation(rn, gap)
	case askKeptSess:
		return b.startKeptSession(rn, gap)
	}
	dir := []string{"-dir", filepath.Dir(rn.in)}
	argv := append([]string{b.bin, "ask"}, append(dir, askQuestion)...)
	want := askAnswer
	switch name {
	case askExec:
		argv = append([]string{b.bin, "send"}, append(dir, "-arg", askQuestion)...)
	case askSendCat:
		argv = append([]string{b.bin, "send"}, append(dir, askQuestion)...)
		want = askQuestion + "\n" // send adds the newline, cat echoes it
	}
	if err := awaitAsker(name, rn, argv); err != nil {
		rn.stop()
		return nil, err
	}
	return &asker{ask: timedAfter(gap, func() (string, error) { return output(argv) }), want: want, close: rn.stop}, nil
}

// output runs argv and returns its stdout.
func output(argv []string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	if err := waitOrKill(cmd, time.Minute); err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// awaitAsker waits until the agent of contender name serves. ask -wait
// waits for DIR/ask to be read; send -wait would not do for the exec
// agent, since the harness holds DIR/in open, so one request without a
// reply FIFO (python3 -c without its argument, cat with no input) is
// answered first.
func awaitAsker(name string, rn *running, argv []string) error {
	if name == askBridge {
		_, err := output(append(append(argv[:2:2], "-wait", "10s"), argv[2:]...))
		return err
	}
	in, err := os.OpenFile(rn.in, os.O_WRONLY, 0) // the harness reads it too: no wait
	if err != nil {
		return err
	}
	defer in.Close()
	return awaitServing(in, rn.out)
}
