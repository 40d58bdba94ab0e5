//go:build linux

package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// askFrame is one frame of a conversation's turn.
type askFrame struct {
	ID       string  `json:"id"`
	Type     string  `json:"type"`
	Data     *string `json:"data"`
	DataB64  []byte  `json:"data_b64"`
	Error    string  `json:"error"`
	TimedOut bool    `json:"timed_out"`
	Ready    bool    `json:"ready"`
	// How a turn ended: an incomplete input, the prompt's status and
	// groups, a child that was not ready.
	Incomplete bool              `json:"incomplete"`
	Status     *int              `json:"status"`
	Prompt     map[string]string `json:"prompt"`
	NotReady   string            `json:"not_ready"`
	DurationMS *int64            `json:"duration_ms"`
	line       string
}

// rawAsk is one ask spoken on the wire, as a client that makes its own
// reply FIFO does: the FIFO in DIR/replies, its read end, held open while
// the ask waits (as ask holds it), and a write end of its own, so that
// the read end sees no end of file before the agent opens the FIFO.
type rawAsk struct {
	t    *testing.T
	id   string
	path string
	r    *fifoEnd
	keep *os.File
}

// newRawAsk makes the reply FIFO of ask id; its ends are closed and the
// FIFO removed when the test ends, or by gone.
func newRawAsk(t *testing.T, a *agent, id string) *rawAsk {
	t.Helper()
	path := filepath.Join(a.dir, "replies", "raw-"+id)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	q := &rawAsk{t: t, id: id, path: path, r: openReader(t, path)}
	keep, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	q.keep = keep
	t.Cleanup(q.gone)
	return q
}

// line is the ask's line for DIR/ask.
func (q *rawAsk) line(input string) string {
	b, err := json.Marshal(map[string]string{"id": q.id, "reply": filepath.Base(q.path), "input": input})
	if err != nil {
		q.t.Fatal(err)
	}
	return string(b)
}

// gone does what a client that goes away does: it closes both ends and
// removes the FIFO.
func (q *rawAsk) gone() {
	q.r.close()
	if q.keep != nil {
		q.keep.Close()
		q.keep = nil
	}
	os.Remove(q.path)
}

// answer reads the ask's frames until its last one, within d, and returns
// the answer and the last frame.
func (q *rawAsk) answer(d time.Duration) (string, askFrame) {
	q.t.Helper()
	var answer strings.Builder
	for {
		line := q.r.readLineWithin(d)
		var f askFrame
		if err := json.Unmarshal([]byte(line), &f); err != nil || f.ID != q.id {
			q.t.Fatalf("ask %s: not one of its frames: %q (%v)", q.id, line, err)
		}
		f.line = line
		switch f.Type {
		case "answer":
			if f.Data != nil {
				answer.WriteString(*f.Data)
			} else {
				answer.Write(f.DataB64)
			}
		case "end", "exit", "error":
			return answer.String(), f
		default:
			q.t.Fatalf("ask %s: a frame of unknown type: %q", q.id, line)
		}
	}
}

// requireAnswer fails t unless the ask ends at a prompt with want.
func (q *rawAsk) requireAnswer(d time.Duration, want string) {
	q.t.Helper()
	got, last := q.answer(d)
	if got != want || last.Type != "end" || !last.Ready {
		q.t.Fatalf("ask %s: answer %q ending with %s, want %q at a prompt", q.id, got, last.line, want)
	}
}

// holdTurn is python3 input that keeps its turn until the file path
// exists, so that the test decides when it ends.
func holdTurn(path, then string) string {
	return fmt.Sprintf("import os, time; _ = [time.sleep(0.01) for _ in iter(lambda: os.path.exists(%q), True)]; %s", path, then)
}

// TestConversationQueueBounds (issue 27, test 4): asks waiting behind a
// long turn hold none of the agent's descriptors, and are answered in
// order; at most 1,000 wait, and one more is refused at once (125, "too
// many asks waiting"); an ask whose asker went away while it waited is
// dropped at its turn, and the child never sees it.
func TestConversationQueueBounds(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startPython(t)
	a.ask("import itertools; c = itertools.count()").requireAnswer(t, "")
	w := openWriter(t, filepath.Join(a.dir, "ask"))
	release := filepath.Join(t.TempDir(), "release")
	long := newRawAsk(t, a, "long")
	w.writeLine(long.line(holdTurn(release, "print('long')")))
	a.waitTurn("the long turn", func(st turnStatus) bool {
		return st.Child.Turn.Answered == 1 && st.Child.Turn.State == "busy" && st.Child.Turn.Queued == 0
	})
	pid := strconv.Itoa(a.pid)
	before, beforeList := fdCount(pid), fdTargets(pid)

	asks := make([]*rawAsk, 300)
	for i := range asks {
		asks[i] = newRawAsk(t, a, fmt.Sprintf("q%d", i))
		w.writeLine(asks[i].line("print(next(c))"))
	}
	a.waitTurn("300 asks queued", func(st turnStatus) bool { return st.Child.Turn.Queued == 300 })
	if after := fdCount(pid); after > before+2 {
		t.Fatalf("300 asks waiting took %d of the agent's descriptors (%d before, %d now)\nbefore:\n%snow:\n%s",
			after-before, before, after, beforeList, fdTargets(pid))
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	long.requireAnswer(hangTimeout, "long\n")
	for i, q := range asks {
		q.requireAnswer(hangTimeout, fmt.Sprintf("%d\n", i))
		q.gone()
	}

	// 1,000 wait behind a long turn, and their askers go away.
	release2 := release + "2"
	long2 := newRawAsk(t, a, "long2")
	w.writeLine(long2.line(holdTurn(release2, "print('long2')")))
	a.waitTurn("the second long turn", func(st turnStatus) bool {
		return st.Child.Turn.Answered == 302 && st.Child.Turn.State == "busy"
	})
	gone := make([]*rawAsk, 1000)
	for i := range gone {
		gone[i] = newRawAsk(t, a, fmt.Sprintf("g%d", i))
		w.writeLine(gone[i].line("print('never seen')"))
	}
	a.waitTurn("1,000 asks queued", func(st turnStatus) bool { return st.Child.Turn.Queued == 1000 })
	// Refused at once: nothing it could wait for ends before the release.
	res := a.ask("print('one too many')")
	if res.code != 125 || !strings.Contains(res.stderr, "too many asks waiting") {
		t.Fatalf("the 1,001st ask exited %d with %q, want 125 saying too many asks wait", res.code, res.stderr)
	}
	for _, q := range gone {
		q.gone()
	}
	if err := os.WriteFile(release2, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	long2.requireAnswer(hangTimeout, "long2\n")
	// The child saw none of the 1,000: the count goes on from 300.
	a.ask("print(next(c))").requireAnswer(t, "300\n")
	long.gone()
	long2.gone()
	a.stop()
	requireNoReplies(t, a.dir)
}

// TestConversationStalledAsker (issue 27, test 4): an asker that stops
// reading its reply FIFO loses its turn after -stop-timeout: the next ask
// is answered within -stop-timeout + 1 s (with busySlack on top), and the
// agent keeps nothing of the stalled one.
func TestConversationStalledAsker(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	const stopTimeout = time.Second
	a := startPython(t, "-stop-timeout", stopTimeout.String())
	a.ask("print(1)").requireAnswer(t, "1\n")
	w := openWriter(t, filepath.Join(a.dir, "ask"))
	stalled := newRawAsk(t, a, "stalled") // never read
	w.writeLine(stalled.line("print('x' * 4000000)"))
	a.waitTurn("the stalled turn", func(st turnStatus) bool {
		return st.Child.Turn.Answered == 1 && st.Child.Turn.State == "busy"
	})
	start := time.Now()
	a.ask("print('next')").requireAnswer(t, "next\n")
	if d := time.Since(start); d > stopTimeout+time.Second+busySlack {
		t.Fatalf("the ask behind a stalled asker took %v, want at most -stop-timeout + 1 s", d)
	}
	if !eventually(hangTimeout, func() bool { return len(holders(stalled.path)[a.pid]) == 0 }) {
		t.Fatalf("the agent still holds the stalled asker's reply FIFO: %v", holders(stalled.path))
	}
	a.ask("print(2)").requireAnswer(t, "2\n")
	a.stop()
}

// TestConversationBigAnswer (issue 27, test 4): a 100 MiB answer to an
// asker that reads slowly keeps the agent under 20 MiB resident: the child
// waits for the asker, and the answer arrives whole.
func TestConversationBigAnswer(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startPython(t)
	a.ask("import sys").requireAnswer(t, "")
	const size = 100 << 20
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(agentBin, "ask", "-dir", a.dir, "-timeout", "120s",
		fmt.Sprintf("_ = sys.stdout.write('x' * %d + '\\n')", size))
	cmd.Env = agentEnv(t)
	cmd.SysProcAttr = dieWithTest()
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer cmd.Wait()
	defer cmd.Process.Kill()
	// A slow reader is what the test is about: 64 KiB at a time, with a
	// pause after each.
	br := bufio.NewReaderSize(r, 64<<10)
	buf := make([]byte, 64<<10)
	total, bad := 0, 0
	for {
		n, err := br.Read(buf)
		for _, c := range buf[:n] {
			if c != 'x' {
				bad++
			}
		}
		total += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ask: %v; stderr:\n%s", err, stderr.String())
	}
	if total != size+1 || bad != 1 {
		t.Fatalf("the answer had %d bytes, %d of them not x; want %d x and a newline", total, bad, size)
	}
	// 100 MiB held would show far above either bound; a -race build of
	// the agent needs more for itself (the detector's shadow memory).
	limit := 20 << 20
	if raceBuild {
		limit = 64 << 20
	}
	if peak := vmHWM(t, a.pid); peak > limit {
		t.Fatalf("the agent's resident set peaked at %d MiB, want under %d MiB", peak>>20, limit>>20)
	}
	a.stop()
}

// vmHWM returns the peak resident set of pid in bytes.
func vmHWM(t *testing.T, pid int) int { return procStatusBytes(t, pid, "VmHWM") }

// TestConversationInterruptNoLeak (issue 27, test 3): a command that
// ignores SIGINT and writes after -stop-timeout: the next ask waits for
// the prompt, however long, and gets only its own answer.
func TestConversationInterruptNoLeak(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startPython(t, "-stop-timeout", "1s")
	a.ask("import signal, time; _ = signal.signal(signal.SIGINT, signal.SIG_IGN)").requireAnswer(t, "")
	// The first turn writes only once the test releases it, after it
	// timed out and the next ask waits.
	release := filepath.Join(t.TempDir(), "release")
	first, out := a.startAsk("-timeout", "1s", holdTurn(release, "print('LEAKED-OLD')"))
	a.waitTurn("the first turn", func(st turnStatus) bool {
		return st.Child.Turn.Answered == 1 && st.Child.Turn.State == "busy"
	})
	next, nextOut := a.startAsk("-wait", "10s", "print('new-1')")
	first.Wait()
	if c := exitCode(first.ProcessState); c != 124 {
		t.Fatalf("the interrupted ask exited %d, want 124: %s", c, out)
	}
	a.waitTurn("the next ask waiting", func(st turnStatus) bool { return st.Child.Turn.Queued == 1 })
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	next.Wait()
	if c := exitCode(next.ProcessState); c != 0 || nextOut.String() != "new-1\n" {
		t.Fatalf("the next ask exited %d with %q, want 0 with %q", c, nextOut.String(), "new-1\n")
	}
	a.stop()
}

// TestConversationIdleTimeout (issue 27, test 7): -idle-timeout counts
// asks: a turn longer than it is answered, and the agent stops about the
// idle timeout after the last one.
func TestConversationIdleTimeout(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	const idle = 2 * time.Second
	a := startPython(t, "-idle-timeout", idle.String())
	// The answer is python3's clock as it ends the turn: the agent's last
	// activity comes after it, and the test sees the answer later still.
	res := a.ask("import time; time.sleep(3.5); print(time.time_ns())")
	ns, err := strconv.ParseInt(strings.TrimSpace(res.stdout), 10, 64)
	if res.code != 0 || err != nil {
		t.Fatalf("ask exited %d with %q, want python3's clock; stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	answered := time.Now()
	a.wait(hangTimeout)
	if d := time.Since(time.Unix(0, ns)); d < idle {
		t.Fatalf("the agent stopped %v after the turn ended, before -idle-timeout %v", d, idle)
	}
	if d := time.Since(answered); d > idle+busySlack {
		t.Fatalf("the agent stopped %v after the last answer, want about %v", d, idle)
	}
	if !strings.Contains(a.stderr(), "idle") {
		t.Fatalf("the agent did not log why it stopped:\n%s", a.stderr())
	}
}
