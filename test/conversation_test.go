//go:build linux

package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// pythonPrompt is python3's prompts, primary and continuation.
const pythonPrompt = `^(>>>|\.\.\.) $`

// startPython starts an agent holding a conversation with python3 -i on
// pipes, its prompts and errors on its stdout.
func startPython(t *testing.T, flags ...string) *agent {
	t.Helper()
	requirePython(t)
	flags = append([]string{"-prompt", pythonPrompt, "-stderr", "out"}, flags...)
	return startAgent(t, agentConfig{flags: flags, program: []string{"python3", "-i", "-q"}})
}

func requirePython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is needed (CI installs it): %v", err)
	}
}

// ask runs "fifobridge ask -dir DIR ARGS..." as this process.
func (a *agent) ask(args ...string) hostResult {
	a.t.Helper()
	return runAs(a.t, nil, nil, append([]string{"ask", "-dir", a.dir, "-wait", "10s"}, args...)...)
}

// requireAnswer fails t unless res is a turn that ended at a prompt with
// exactly want on stdout.
func (res hostResult) requireAnswer(t *testing.T, want string) {
	t.Helper()
	if res.code != 0 || res.stdout != want {
		t.Fatalf("ask exited %d with %q, want 0 with %q; stderr:\n%s", res.code, res.stdout, want, res.stderr)
	}
}

// turnStatus is the conversation's part of the status file.
type turnStatus struct {
	Child struct {
		Turn *struct {
			State      string `json:"state"`
			Queued     int    `json:"queued"`
			Answered   int    `json:"answered"`
			TimedOut   int    `json:"timed_out"`
			Incomplete int    `json:"incomplete"`
		} `json:"turn"`
	} `json:"child"`
	Transcript *struct {
		Written int64 `json:"written"`
		Dropped int64 `json:"dropped"`
	} `json:"transcript"`
}

// waitTurn waits until the status file's turn satisfies cond.
func (a *agent) waitTurn(what string, cond func(turnStatus) bool) turnStatus {
	a.t.Helper()
	var st turnStatus
	if !eventually(hangTimeout, func() bool {
		b, err := os.ReadFile(a.status)
		st = turnStatus{}
		return err == nil && json.Unmarshal(b, &st) == nil && st.Child.Turn != nil && cond(st)
	}) {
		a.t.Fatalf("the status never showed %s; last: %+v", what, st.Child.Turn)
	}
	return st
}

// startAsk starts "fifobridge ask" in the background.
func (a *agent) startAsk(args ...string) (*exec.Cmd, *strings.Builder) {
	a.t.Helper()
	cmd := exec.Command(agentBin, append([]string{"ask", "-dir", a.dir}, args...)...)
	cmd.Env = agentEnv(a.t)
	cmd.SysProcAttr = dieWithTest()
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	return cmd, out
}

// TestConversationPython: python3 -i on pipes answers each ask exactly,
// errors included, concurrent asks in turn, a long answer whole while
// nobody reads the transcript.
func TestConversationPython(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startPython(t)
	a.ask("print(6*7)").requireAnswer(t, "42\n")
	res := a.ask("1/0")
	if res.code != 0 || !strings.Contains(res.stdout, "Traceback") || !strings.Contains(res.stdout, "ZeroDivisionError: division by zero\n") {
		t.Fatalf("ask '1/0' exited %d with %q, want the traceback", res.code, res.stdout)
	}
	if strings.Contains(res.stdout, ">>>") {
		t.Fatalf("the answer holds the prompt: %q", res.stdout)
	}

	var wg sync.WaitGroup
	results := make([]hostResult, 10)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runAs(t, nil, nil, "ask", "-dir", a.dir, fmt.Sprintf("print('answer %d')", i))
		}()
	}
	wg.Wait()
	for i, res := range results {
		res.requireAnswer(t, fmt.Sprintf("answer %d\n", i))
	}

	// Nobody has ever read the output FIFO: the transcript drops, the
	// answer does not.
	a.ask("print('x' * 300000)").requireAnswer(t, strings.Repeat("x", 300000)+"\n")
	// The transcript's writer counts what it wrote or dropped after the
	// turn ended, and the status file shows it at its next rewrite.
	st := a.waitTurn("13 turns answered, the answer's bytes counted", func(st turnStatus) bool {
		return st.Child.Turn.Answered == 13 && st.Transcript != nil && st.Transcript.Written+st.Transcript.Dropped >= 300000
	})
	if st.Child.Turn.State != "ready" {
		t.Fatalf("status after the asks: turn %+v, transcript %+v", st.Child.Turn, st.Transcript)
	}

	// -quiet ends a turn that shows no prompt in time: the answer comes
	// while python3 still waits for a file that the test makes only
	// later; the prompt that comes then is no part of the next answer.
	release := filepath.Join(t.TempDir(), "release")
	a.ask("-quiet", "300ms", holdTurn(release, "pass")).requireAnswer(t, "")
	// Taken as ready, python3 gets the next input while it still waits:
	// its late prompt comes first, as it would at a terminal.
	next, out := a.startAsk("-wait", "10s", "print('after quiet')")
	waitFIFOHolds(t, fmt.Sprintf("/proc/%d/fd/0", a.waitChild()), len("print('after quiet')\n"))
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	next.Wait()
	if code := exitCode(next.ProcessState); code != 0 || strings.TrimPrefix(out.String(), ">>> ") != "after quiet\n" {
		t.Fatalf("ask after the quiet turn exited %d with %q", code, out.String())
	}
	a.stop() // python3 ends on HUP
	requireNoReplies(t, a.dir)
	if _, err := os.Lstat(filepath.Join(a.dir, "ask")); !os.IsNotExist(err) {
		t.Fatalf("the agent left DIR/ask behind: %v", err)
	}
}

// TestConversationShellTerminal: sh -i on a terminal answers without echo,
// carriage returns or escapes; a timed-out ask interrupts its command even
// when the agent ignores SIGINT (a script's background job), and the next
// ask is answered; TERM ends the shell by its hangup, not by SIGKILL at
// -stop-timeout.
func TestConversationShellTerminal(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	// The agent runs as a script's background job would: SIGINT ignored.
	wrap := []string{busybox, "sh", "-c", `trap '' INT; exec "$@"`, "sh"}
	a := startAgent(t, agentConfig{wrap: wrap, wrapExecs: true, unsetEnv: []string{"TERM"},
		flags:   []string{"-tty", "-prompt", `^\$ $`, "-stop-timeout", "20s"},
		program: []string{busybox, "PS1=$ ", "sh", "-i"}})
	a.ask("echo $((6*7))").requireAnswer(t, "42\n")
	a.ask("echo $TERM").requireAnswer(t, "dumb\n")

	res := a.ask("-timeout", "1s", "sleep 300")
	if res.code != 124 {
		t.Fatalf("ask -timeout 1s 'sleep 300' exited %d, want 124; stderr:\n%s", res.code, res.stderr)
	}
	var sleeping []int
	if !eventually(hangTimeout, func() bool {
		sleeping = sleepsIn(a.pid)
		return len(sleeping) == 0
	}) {
		t.Fatalf("sleep 300 was not interrupted: pids %v", sleeping)
	}
	a.ask("echo next").requireAnswer(t, "next\n")
	a.waitTurn("one timed out", func(st turnStatus) bool { return st.Child.Turn.TimedOut == 1 })

	// The shell dies of the hangup (129), long before SIGKILL (137) would
	// end it at -stop-timeout 20s.
	a.signal(syscall.SIGTERM)
	if code := a.wait(hangTimeout); code != 128+int(syscall.SIGHUP) {
		t.Fatalf("the agent exited %d after TERM, want %d: the shell's status, ended by its hangup", code, 128+int(syscall.SIGHUP))
	}
}

// sleepsIn lists the sleep processes among pid's descendants.
func sleepsIn(pid int) []int {
	var out []int
	for _, p := range treeOf(pid) {
		if st, err := readStat(p); err == nil && st.comm == "sleep" {
			out = append(out, p)
		}
	}
	return out
}

// TestConversationContinuationPrompt: on a terminal, a multi-line ask to
// python3 whose -prompt matches only its main prompt ends at that prompt,
// and the echo of the later line, after the continuation prompt "... ", is
// not part of the answer; output that does not end its line ends at the
// prompt that follows it on that line.
func TestConversationContinuationPrompt(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requirePython(t)
	a := startAgent(t, agentConfig{flags: []string{"-tty", "-prompt", `^>>> $`},
		program: []string{"python3", "-i", "-q"}})
	a.ask("-timeout", "5s", "x = (1,\n2)").requireAnswer(t, "")
	a.ask("-timeout", "5s", "for i in 'ab':\n    print(i)\n\n").requireAnswer(t, "a\nb\n")
	a.ask("-timeout", "5s", "x").requireAnswer(t, "(1, 2)\n")
	a.ask("-timeout", "5s", "print('x', end='')").requireAnswer(t, "x")
	a.stop()
}

// TestConversationKilledAsk: an ask killed mid-turn (SIGKILL: it removes
// nothing) interrupts its turn, and its leftovers never reach the next.
func TestConversationKilledAsk(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startPython(t)
	a.ask("print('warm')").requireAnswer(t, "warm\n")
	// The orphaned turn would wait for ever: only an interrupt ends it.
	never := filepath.Join(t.TempDir(), "never")
	cmd, _ := a.startAsk(holdTurn(never, "print('orphan')"))
	a.waitTurn("the second turn in progress", func(st turnStatus) bool {
		return st.Child.Turn.Answered == 1 && st.Child.Turn.State == "busy"
	})
	cmd.Process.Kill()
	cmd.Wait()
	res := a.ask("print('mine')")
	res.requireAnswer(t, "mine\n")
	res = a.ask("print('again')")
	res.requireAnswer(t, "again\n")
	os.RemoveAll(filepath.Join(a.dir, "replies")) // the killed ask's reply FIFO
}

// TestConversationChildExits: a child that exits during a turn ends it
// with its status; a restarted child answers the next ask, and without a
// restart queued asks fail with 125.
func TestConversationChildExits(t *testing.T) {
	t.Parallel()
	t.Run("restarted", func(t *testing.T) {
		checkLeaks(t, false)
		a := startPython(t, "-restart", "always", "-backoff-min", "10ms")
		res := a.ask("import sys; print('bye'); sys.exit(3)")
		if res.code != 3 || res.stdout != "bye\n" {
			t.Fatalf("ask exited %d with %q, want 3 with %q; stderr:\n%s", res.code, res.stdout, "bye\n", res.stderr)
		}
		a.ask("print(7)").requireAnswer(t, "7\n")
	})
	t.Run("not restarted", func(t *testing.T) {
		checkLeaks(t, false)
		a := startPython(t, "-restart", "never")
		a.ask("print(1)").requireAnswer(t, "1\n")
		first, out := a.startAsk("import sys, time; time.sleep(0.5); sys.exit(4)")
		a.waitTurn("the second turn in progress", func(st turnStatus) bool {
			return st.Child.Turn.Answered == 1 && st.Child.Turn.State == "busy"
		})
		second, out2 := a.startAsk("print('never')")
		first.Wait()
		second.Wait()
		if c := exitCode(first.ProcessState); c != 4 {
			t.Fatalf("first ask exited %d, want 4: %s", c, out)
		}
		if c := exitCode(second.ProcessState); c != 125 || strings.Contains(out2.String(), "never") {
			t.Fatalf("queued ask exited %d, want 125: %s", c, out2)
		}
		a.wait(hangTimeout)
	})
}

// TestConversationRefused: ask needs an agent with -prompt; to any other
// it writes nothing and exits 125. run refuses -prompt in exec mode.
func TestConversationRefused(t *testing.T) {
	t.Parallel()
	t.Run("exec mode", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{busybox, "cat"}})
		waitServing(t, a)
		res := runAs(t, nil, nil, "ask", "-dir", a.dir, "hello")
		if res.code != 125 || !strings.Contains(res.stderr, "exec mode") {
			t.Fatalf("ask to exec mode exited %d: %s", res.code, res.stderr)
		}
		if st := a.waitStatus("running", func(st status) bool { return st.State == "running" }); st.Requests.Accepted+st.Requests.Rejected != 0 {
			t.Fatalf("the exec agent got a request: %+v", st.Requests)
		}
	})
	t.Run("no -prompt", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{program: []string{busybox, "cat"}})
		waitServing(t, a)
		r := openReader(t, a.out)
		res := runAs(t, nil, nil, "ask", "-dir", a.dir, "hello")
		if res.code != 125 || !strings.Contains(res.stderr, "-prompt") {
			t.Fatalf("ask without -prompt exited %d: %s", res.code, res.stderr)
		}
		w := openWriter(t, a.in)
		w.writeLine("marker")
		r.expectLine("marker") // and nothing before it
		w.close()
	})
	t.Run("run refuses -prompt in exec mode", func(t *testing.T) {
		code, stderr := runAgent(t, nil, "run", "-dir", t.TempDir()+"/fb", "-mode", "exec", "-prompt", ">", "--", "true")
		if code != 125 || !strings.Contains(stderr, "-prompt") {
			t.Fatalf("run -mode exec -prompt exited %d (%s), want 125", code, stderr)
		}
	})
}

// TestConversationHostUser: a member of DIR's group asks as it sends.
func TestConversationHostUser(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	requirePython(t)
	requireReachable(t, member)
	checkLeaks(t, false)
	s := hostSetups[0]
	a := startAgent(t, agentConfig{dir: s.makeDir(t), flags: []string{"-prompt", pythonPrompt, "-stderr", "out"},
		program: []string{"python3", "-i", "-q"}})
	runAs(t, nil, nil, "ask", "-dir", a.dir, "-wait", "10s", "print(0)").requireAnswer(t, "0\n")
	runAs(t, member, nil, "ask", "-dir", a.dir, "print(6*7)").requireAnswer(t, "42\n")
	requireNoReplies(t, a.dir)
}

// TestConversationAskFollowed: DIR/ask is followed as DIR/in is: removed,
// it is made again; replaced, the new one is served.
func TestConversationAskFollowed(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startPython(t)
	a.ask("print(1)").requireAnswer(t, "1\n")
	askPath := filepath.Join(a.dir, "ask")
	if err := os.Remove(askPath); err != nil {
		t.Fatal(err)
	}
	a.ask("print(2)").requireAnswer(t, "2\n") // -wait: until it is made again
	if err := os.Remove(askPath); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(askPath, 0o600); err != nil {
		t.Fatal(err)
	}
	a.ask("print(3)").requireAnswer(t, "3\n")
	if code := a.stop(); code != 0 && code != 129 { // python3 ends on HUP
		t.Fatalf("agent exited %d", code)
	}
}

// TestConversationSweep: the reply FIFO of an ask killed by SIGKILL is
// removed by the agent's sweep, as a killed send's is.
func TestConversationSweep(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requirePython(t)
	a := startAgent(t, agentConfig{env: []string{sweepEnv},
		flags:   []string{"-prompt", pythonPrompt, "-stderr", "out"},
		program: []string{"python3", "-i", "-q"}})
	a.ask("print(1)").requireAnswer(t, "1\n")
	cmd, _ := a.startAsk("import time; time.sleep(30)")
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if !eventually(hangTimeout, func() bool { return len(replyNames(t, a.dir)) == 1 }) {
		t.Fatalf("replies: %v, want the ask's FIFO", replyNames(t, a.dir))
	}
	a.waitTurn("the ask's turn", func(ts turnStatus) bool {
		return ts.Child.Turn != nil && ts.Child.Turn.Answered == 1 && ts.Child.Turn.State == "busy"
	})
	cmd.Process.Kill()
	cmd.Wait()
	if !eventually(hangTimeout, func() bool { return len(replyNames(t, a.dir)) == 0 }) {
		t.Fatalf("the killed ask's reply FIFO is still there: %v", replyNames(t, a.dir))
	}
	a.ask("print(2)").requireAnswer(t, "2\n")
}
