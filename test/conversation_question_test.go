//go:build linux

package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Issue 34, item 1 (CONTRACT.md, "Conversations"): nothing the child
// writes waits for a newline. The question a running command waits on
// reaches `ask` while its turn stays open, the answer typed into the
// child's input FIFO goes to the command, and the same `ask` gets the rest
// and exits with the command's status; a prompt longer than 64 bytes
// after output that did not end its line ends the turn; output that
// pauses before its newline reaches `ask` at the pause.

// questionSettle is the -settle of these tests: a question reaches `ask`
// within it and 0.5 s (busySlack on top), or at once when the child is
// seen waiting for input.
const questionSettle = 200 * time.Millisecond

// longDir is a working directory that makes the shell's prompt 200 bytes
// long: "[N|" + longDir + "] $ ".
var longDir = "/a/long/working/dir/" + strings.Repeat("x", 200-len("[0|/a/long/working/dir/] $ "))

// questionPrompt matches the shell's prompt, PS1='[$?|DIR] $ ': its
// status, and a working directory of any length.
const questionPrompt = `^\[(?P<status>\d+)\|[^]]*\] \$ $`

// questionShell is bash with that prompt. Line editing is off so that on
// pipes bash does not echo its input; on a terminal the terminal does.
func questionShell(t *testing.T) []string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed (CI installs it): %v", err)
	}
	requirePython(t)
	return []string{busybox, "PS1=[$?|" + longDir + "] $ ", bash, "--norc", "--noprofile", "--noediting", "-i"}
}

// questionCase is a command that asks a question and waits for its
// answer, on pipes or on a terminal.
type questionCase struct {
	name     string
	command  string
	question string // what ask prints before the answer is typed
	typed    string // the answer typed, a line
	rest     string // what ask prints after it
	code     int    // the command's status, ask's exit code
}

// questionCases are read -p, python3's input() and a [Y/n] question. bash
// shows read's prompt only when its input is a terminal: on pipes the
// command prints it itself, as scripts do.
func questionCases(tty bool) []questionCase {
	read := func(prompt, v string) string {
		if tty {
			return "read -p '" + prompt + "' " + v
		}
		return "printf '" + prompt + "'; read " + v
	}
	echo := func(typed string) string { // the terminal's echo of the typed line
		if tty {
			return typed + "\n"
		}
		return ""
	}
	return []questionCase{
		{"read", read("Enter name: ", "n") + `; echo "hi $n"; (exit 4)`, "Enter name: ", "bob",
			echo("bob") + "hi bob\n", 4},
		{"input", `python3 -c "n = input('Enter your name: '); print('hi', n); raise SystemExit(5)"`,
			"Enter your name: ", "ann", echo("ann") + "hi ann\n", 5},
		{"yes or no", read("Proceed? [Y/n] ", "a") + `; [ "$a" = y ] && echo proceeding`, "Proceed? [Y/n] ", "y",
			echo("y") + "proceeding\n", 0},
	}
}

// questionTarget is where the questions are asked: the stream, or a
// session.
type questionTarget struct {
	a       *agent
	session string // "" for the stream
	in      string // the input FIFO the status file names
}

func (q questionTarget) askArgs(args ...string) []string {
	base := []string{"ask", "-dir", q.a.dir, "-wait", "10s", "-timeout", "60s"}
	if q.session != "" {
		base = append(base, "-session", q.session)
	}
	return append(base, args...)
}

// startQuestionTarget starts an agent with the shell, in stream mode or
// in a session, on pipes or a terminal, with the questions' -settle.
func startQuestionTarget(t *testing.T, sessions, tty bool) questionTarget {
	t.Helper()
	flags := []string{"-settle", questionSettle.String(), "-stderr", "out"}
	if !sessions {
		flags = append(flags, "-prompt", questionPrompt)
		if tty {
			flags = append(flags, "-tty")
		}
		a := startAgent(t, agentConfig{flags: flags, program: questionShell(t)})
		st := a.waitStatus("its input FIFO", func(st status) bool { return st.In != "" })
		return questionTarget{a: a, in: st.In}
	}
	a := startSessions(t, flags, questionShell(t))
	a.mustOpen("sh", map[string]any{"prompt": questionPrompt, "tty": tty})
	return questionTarget{a: a, session: "sh", in: a.sessionFile("sh", "in")}
}

// TestConversationQuestion: in stream mode and in a session, on pipes and
// on a terminal, the question of read -p, python3's input() and a [Y/n]
// question reaches ask's stdout within -settle and 0.5 s (busySlack on
// top) while its turn stays open; the answer typed by fifobridge type
// (into the input FIFO the status file names) reaches the command, and the same ask prints the
// rest and exits with the command's status, which the prompt shows.
func TestConversationQuestion(t *testing.T) {
	checkLeaks(t, false)
	for _, sessions := range []bool{false, true} {
		for _, tty := range []bool{false, true} {
			name := map[bool]string{false: "stream", true: "session"}[sessions] + map[bool]string{false: " on pipes", true: " on a terminal"}[tty]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				checkLeaks(t, false)
				q := startQuestionTarget(t, sessions, tty)
				for _, c := range questionCases(tty) {
					q.question(t, c)
				}
				q.a.stop()
				requireNoReplies(t, q.a.dir)
			})
		}
	}
}

// question asks c's command and answers its question.
func (q questionTarget) question(t *testing.T, c questionCase) {
	t.Helper()
	start := time.Now()
	ask := startWatchedAsk(t, q.askArgs(c.command))
	if !ask.waitFor(c.question, questionSettle+500*time.Millisecond+busySlack) || ask.exited() {
		t.Fatalf("%s: ask printed %q within %v of its start (%s), want %q while its turn is open; agent's stderr:\n%s",
			c.name, ask.stdout(), time.Since(start), ask.state(), c.question, q.a.stderr())
	}
	typeArgs := []string{"type", "-dir", q.a.dir}
	if q.session != "" {
		typeArgs = append(typeArgs, "-session", q.session)
	}
	runAs(t, nil, nil, append(typeArgs, c.typed)...).requireCode(t, "type "+c.typed, 0, "")
	code := ask.wait(t)
	if got, want := ask.stdout(), c.question+c.rest; code != c.code || got != want {
		t.Errorf("%s: ask exited %d with %q, want %d with %q; stderr %q", c.name, code, got, c.code, want, ask.stderrText())
	}
}

// TestConversationLongPrompt: a prompt of 200 bytes after printf foo, on
// pipes and on a terminal: one answer, "foo", exactly once, at the
// prompt, with no timeout. It used to be seen only in its last 64 bytes:
// the ask timed out and foo was lost.
func TestConversationLongPrompt(t *testing.T) {
	checkLeaks(t, false)
	for _, tty := range []bool{false, true} {
		t.Run(map[bool]string{false: "pipes", true: "terminal"}[tty], func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			q := startQuestionTarget(t, false, tty)
			for range 3 {
				res := runAs(t, nil, nil, q.askArgs("-timeout", "8s", "printf foo")...)
				if res.code != 0 || res.stdout != "foo" {
					t.Fatalf("ask 'printf foo' exited %d with %q, want 0 with \"foo\"; stderr %q", res.code, res.stdout, res.stderr)
				}
			}
			if res := runAs(t, nil, nil, q.askArgs("-timeout", "8s", "printf bar; false")...); res.code != 1 || res.stdout != "bar" {
				t.Fatalf("ask 'printf bar; false' exited %d with %q, want 1 with \"bar\"", res.code, res.stdout)
			}
			q.a.stop()
			requireNoReplies(t, q.a.dir)
		})
	}
}

// TestConversationPauseBeforeNewline: printf abc, a pause, then echo def
// (the pause a wait on a FIFO the test holds, not a sleep): abc reaches
// ask's stdout while the child still waits, def once the test lets it
// go, and the ask ends at the prompt.
func TestConversationPauseBeforeNewline(t *testing.T) {
	checkLeaks(t, false)
	for _, tty := range []bool{false, true} {
		t.Run(map[bool]string{false: "pipes", true: "terminal"}[tty], func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			q := startQuestionTarget(t, false, tty)
			gate := filepath.Join(t.TempDir(), "gate")
			if err := syscall.Mkfifo(gate, 0o600); err != nil {
				t.Fatal(err)
			}
			ask := startWatchedAsk(t, q.askArgs("printf abc; cat "+gate+" >/dev/null; echo def"))
			if !ask.waitFor("abc", questionSettle+500*time.Millisecond+busySlack) || ask.exited() {
				t.Fatalf("ask printed %q while the child waits (%s), want \"abc\"", ask.stdout(), ask.state())
			}
			w := openWriter(t, gate) // cat reads end-of-file once it is closed
			w.close()
			if code := ask.wait(t); code != 0 || ask.stdout() != "abcdef\n" {
				t.Errorf("ask exited %d with %q, want 0 with \"abcdef\\n\"; stderr %q", code, ask.stdout(), ask.stderrText())
			}
			q.a.stop()
			requireNoReplies(t, q.a.dir)
		})
	}
}

// watchedAsk is a `fifobridge ask` whose stdout the test follows as it
// comes.
type watchedAsk struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    bytes.Buffer
	more   chan struct{} // a token when out grew or the ask exited
	done   chan struct{} // closed once the ask exited and its stdout ended
	code   int
	stderr strings.Builder
}

// startWatchedAsk starts fifobridge ARGS... (an ask), reading its stdout
// as it comes.
func startWatchedAsk(t *testing.T, args []string) *watchedAsk {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	a := &watchedAsk{cmd: exec.Command(agentBin, args...), more: make(chan struct{}, 1), done: make(chan struct{})}
	a.cmd.Env = agentEnv(t)
	a.cmd.SysProcAttr = dieWithTest()
	a.cmd.Stdout, a.cmd.Stderr = w, &a.stderr
	err = a.cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	go a.follow(r)
	t.Cleanup(func() {
		a.cmd.Process.Kill()
		<-a.done
	})
	return a
}

// follow reads the ask's stdout until it ends, then waits for the ask.
func (a *watchedAsk) follow(r *os.File) {
	defer close(a.done)
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		a.mu.Lock()
		a.out.Write(buf[:n])
		a.mu.Unlock()
		a.poke()
		if err != nil {
			break
		}
	}
	r.Close()
	a.cmd.Wait()
	a.code = exitCode(a.cmd.ProcessState)
	a.poke()
}

func (a *watchedAsk) poke() {
	select {
	case a.more <- struct{}{}:
	default:
	}
}

func (a *watchedAsk) stdout() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out.String()
}

// waitFor waits up to d for the ask's stdout to be want so far; false if
// it is not by then, or it became something else, or the ask exited.
func (a *watchedAsk) waitFor(want string, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		got := a.stdout()
		switch {
		case got == want:
			return true
		case !strings.HasPrefix(want, got) || a.exited():
			return false
		}
		select {
		case <-a.more:
		case <-deadline.C:
			return false
		}
	}
}

func (a *watchedAsk) exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// wait waits for the ask to exit, at most hangTimeout, and returns its
// exit code.
func (a *watchedAsk) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-a.done:
	case <-time.After(hangTimeout):
		t.Fatalf("ask did not exit within %v; its stdout %q", hangTimeout, a.stdout())
	}
	checkRace(t, "fifobridge ask", a.stderr.String())
	return a.code
}

// state says whether the ask still runs, or how it exited.
func (a *watchedAsk) state() string {
	if !a.exited() {
		return "running"
	}
	return fmt.Sprintf("exited %d, stderr %q", a.code, a.stderr.String())
}

func (a *watchedAsk) stderrText() string {
	<-a.done
	return a.stderr.String()
}
