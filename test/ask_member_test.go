//go:build linux

package test

// The host side of a conversation as a member of DIR's group, in the
// README's shared-group setup with an agent that is not root (DIR 2770
// of the agent's user and the group, -perm 0660): what `ask` says of how
// a turn ended (the prompt's status, an incomplete input, a child not
// ready, read from the end frame or from the status file), its exits
// while its stdout blocks, and a client.Asker. The same as root is
// tested in conversation_endings_test.go, hoststdout_test.go and
// asker_test.go.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

func init() {
	helpers["asker"] = helperAsker
}

// TestAskMember: each way a turn ends, told to a member as to root.
func TestAskMember(t *testing.T) {
	// Not parallel: it counts this process's descriptors itself.
	requireRoot(t)
	requirePython(t)
	for _, cred := range []*syscall.Credential{groupAgent, member} {
		requireReachable(t, cred)
	}
	start := func(t *testing.T, flags []string, program ...string) *agent {
		dir := groupDir(t, groupAgent.Uid, 0o770|os.ModeSetgid)
		return startAgent(t, agentConfig{dir: dir, cred: groupAgent, flags: flags, program: program})
	}
	ask := func(t *testing.T, a *agent, args ...string) hostResult {
		return runAs(t, member, nil, append([]string{"ask", "-dir", a.dir, "-wait", "10s"}, args...)...)
	}
	t.Run("status", func(t *testing.T) {
		checkLeaks(t, true)
		a := start(t, []string{"-prompt", `^\[(?P<status>\d+)\] \$ $`, "-stderr", "out"}, busybox, "PS1=[$?] $ ", "sh", "-i")
		for cmd, code := range map[string]int{"(exit 7)": 7, "false": 1, "true": 0} {
			if res := ask(t, a, cmd); res.code != code || res.stdout != "" {
				t.Fatalf("ask %q as a member exited %d with %q, want %d; stderr:\n%s", cmd, res.code, res.stdout, code, res.stderr)
			}
		}
		a.stop()
		requireNoReplies(t, a.dir)
	})
	t.Run("incomplete", func(t *testing.T) {
		checkLeaks(t, true)
		a := start(t, []string{"-prompt", `^>>> $`, "-continuation", `^\.\.\. $`, "-stderr", "out"}, "python3", "-i", "-q")
		res := ask(t, a, "for i in range(3): print(i)")
		if res.code != 125 || res.stdout != "" || !strings.Contains(res.stderr, "the input was incomplete") || strings.Count(res.stderr, "\n") != 1 {
			t.Fatalf("an incomplete for as a member: ask exited %d with %q, stderr %q; want 125 and one line naming it", res.code, res.stdout, res.stderr)
		}
		ask(t, a, "print(6*7)").requireAnswer(t, "42\n")
		a.stop()
		requireNoReplies(t, a.dir)
	})
	t.Run("not ready", func(t *testing.T) {
		checkLeaks(t, true)
		a := start(t, []string{"-prompt", `^NEVER$`, "-stderr", "out"}, "python3", "-i", "-q")
		const why = `no prompt matching '^NEVER$' since it started`
		// Past its limit, from the end frame.
		res := ask(t, a, "-timeout", "1s", "print(1)")
		if res.code != 124 || !strings.Contains(res.stderr, why) || strings.Count(res.stderr, "\n") != 1 {
			t.Fatalf("ask -timeout 1s as a member exited %d with stderr %q; want 124 and one line naming the prompt", res.code, res.stderr)
		}
		// Interrupted, from the status file the member reads.
		a.waitTurn("the turn timed out", func(s turnStatus) bool { return s.Child.Turn.TimedOut == 1 })
		cmd := exec.Command(agentBin, "ask", "-dir", a.dir, "-timeout", "60s", "print(2)")
		cmd.Env = agentEnv(t)
		cmd.SysProcAttr = dieWithTest()
		cmd.SysProcAttr.Credential = member
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		a.waitTurn("the ask queued", func(s turnStatus) bool { return s.Child.Turn.Queued == 1 })
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		if code := exitCode(cmd.ProcessState); code != 130 || !strings.Contains(out.String(), "interrupted by SIGINT: the child has shown "+why) {
			t.Fatalf("ask as a member, interrupted, exited %d with %q; want 130 and one line naming the prompt", code, out.String())
		}
		a.stop()
		requireNoReplies(t, a.dir)
	})
	t.Run("stdout blocked", func(t *testing.T) {
		checkLeaks(t, true)
		a := start(t, []string{"-prompt", pythonPrompt, "-stderr", "out"}, "python3", "-i", "-q")
		ask(t, a, "print(1)").requireAnswer(t, "1\n")
		for how, want := range map[string]int{"INT": 130, "timeout": 124} {
			if code := runBlocked(t, a, member, how, false, "ask", "print('x' * (1 << 20))"); code != want {
				t.Fatalf("ask as a member, blocked on its stdout, ended by %s: exit %d, want %d", how, code, want)
			}
			requireNoReplies(t, a.dir)
			ask(t, a, "print(6*7)").requireAnswer(t, "42\n")
		}
		a.stop()
	})
	t.Run("asker", func(t *testing.T) {
		checkLeaks(t, true)
		a := start(t, []string{"-prompt", pythonPrompt, "-stderr", "out"}, "python3", "-i", "-q")
		ask(t, a, "print(1)").requireAnswer(t, "1\n")
		cmd := exec.Command(sharedBin(t), a.dir)
		cmd.Env = append(agentEnv(t), helperEnv+"=asker")
		cmd.SysProcAttr = dieWithTest()
		cmd.SysProcAttr.Credential = member
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != "ok\n" {
			t.Fatalf("a client.Asker as a member: %v; output:\n%s", err, out)
		}
		a.stop()
		requireNoReplies(t, a.dir)
	})
}

// helperAsker DIR asks the python3 conversation of DIR through one
// client.Asker: 20 turns, one given up, one more; Close leaves the
// process the descriptors it had. It prints "ok", or what went wrong and exits 1.
func helperAsker(args []string) int {
	if err := askAsMember(args[0]); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

func askAsMember(dir string) error {
	// The runtime's poller holds two descriptors once it is made: it is
	// made before they are counted.
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	r.Close()
	w.Close()
	before := fdCount("self")
	k, err := client.OpenAsker(dir, client.AskerOptions{Warn: func(msg string) { fmt.Println("warning:", msg) }})
	if err != nil {
		return err
	}
	defer k.Close()
	ask := func(ctx context.Context, input string) (string, error) {
		var out bytes.Buffer
		_, err := k.Ask(ctx, client.Turn{Input: []byte(input), Limit: hangTimeout, Stdout: &out})
		return out.String(), err
	}
	for i := range 20 {
		if got, err := ask(context.Background(), fmt.Sprintf("print(%d * 3)", i)); err != nil || got != fmt.Sprint(i*3, "\n") {
			return fmt.Errorf("turn %d: %q, %v", i, got, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = ask(ctx, "import time; time.sleep(30)")
	cancel()
	if err == nil {
		return fmt.Errorf("a turn given up ended with no error")
	}
	if got, err := ask(context.Background(), "print('after')"); err != nil || got != "after\n" {
		return fmt.Errorf("after a turn given up: %q, %v", got, err)
	}
	if err := k.Close(); err != nil {
		return err
	}
	if n := fdCount("self"); n != before {
		return fmt.Errorf("%d descriptors after Close, %d before OpenAsker", n, before)
	}
	return nil
}
