//go:build linux

package test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fifobridge/fifobridge/client"
	"github.com/fifobridge/fifobridge/internal/testgate"
)

// agentShellHeading is the section of docs/sessions.md whose shell
// example TestDocsSessionsAgentShell runs.
const agentShellHeading = "Recipe: an agent's shell tool"

// agentShellOnPipes are the changes the recipe's paragraph on pipes names,
// each made exactly once: the shell opened without a terminal and with
// --noediting, and a question the command prints itself, as read -p shows
// none without a terminal.
var agentShellOnPipes = [][2]string{
	{` -tty -env `, ` -env `},
	{`bash --norc -i`, `bash --norc --noediting -i`},
	{`read -p "Enter name: " n;`, `printf "Enter name: "; read n;`},
}

// TestDocsSessionsAgentShell runs the recipe of docs/sessions.md ("Recipe:
// an agent's shell tool") as written, on a terminal, and with the changes
// its paragraph on pipes names, on pipes. Each must exit 0 and print what
// its comments say: the failed command's output and status, the directory
// kept, the question and the rest of its answer after type, the job's
// first two steps, the next two steps as a watch begun after them sees
// them, the 130 of the Ctrl-C'd job's ask, and the next answer. Nothing may be left: no process, descriptor,
// FIFO or cgroup (the agent runs in a cgroup of the test's own where the
// machine has cgroup v2). A third part asks the recipe's prompt through
// the wire: its end frame carries the status and the working directory,
// one with "] $ " in its name too.
func TestDocsSessionsAgentShell(t *testing.T) {
	script, line, err := docBlock("../docs/sessions.md", agentShellHeading, "sh")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("terminal", func(t *testing.T) {
		runAgentShell(t, script, line, "Enter name: bob\nhello bob\n")
	})
	t.Run("pipes", func(t *testing.T) {
		piped := script
		for _, r := range agentShellOnPipes {
			if n := strings.Count(piped, r[0]); n != 1 {
				t.Fatalf("docs/sessions.md:%d: the recipe has %q %d times, want once (the paragraph on pipes changes it to %q)", line, r[0], n, r[1])
			}
			piped = strings.Replace(piped, r[0], r[1], 1)
		}
		runAgentShell(t, piped, line, "Enter name: hello bob\n")
	})
	t.Run("prompt groups", func(t *testing.T) {
		askAgentShellPrompt(t, script, line)
	})
}

// agentShellOutput is what the recipe prints, with the question's answer
// (which differs on pipes) and the two steps a watch saw left open.
const agentShellOutput = `^ls: cannot access '?nonexistent'?: No such file or directory\nexit code 2\n/tmp\n%sstep 1\nstep 2\n(step \d+\nstep \d+\n)exit code 130\n42\n$`

// runAgentShell runs script, the recipe, in a cgroup of the test's own
// where there is one, and checks its output (answer is what the question
// and its reply print) and that it left nothing behind.
func runAgentShell(t *testing.T, script string, line int, answer string) {
	checkLeaks(t, true)
	var env []string
	cg, err := makeTestCgroup(t)
	switch {
	case err == nil:
		env = append(env, "FIFOBRIDGE_CGROUP="+cg)
	case testgate.On():
		t.Fatalf("needs a writable cgroup v2 to check that the recipe leaves none: %v", err)
	default:
		t.Logf("no cgroup of the test's own (%v): the cgroups are not checked", err)
	}
	tmp := t.TempDir()
	out, stderr, err := runDocScript(t, script, tmp, env...)
	checkRace(t, "docs/sessions.md recipe", stderr)
	want := regexp.MustCompile(fmt.Sprintf(agentShellOutput, regexp.QuoteMeta(answer)))
	m := want.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("docs/sessions.md:%d: the recipe ended with %v; output:\n%s\nwant it to match %s\nstderr:\n%s", line, err, out, want, stderr)
	}
	if err := consecutiveSteps(m[1], 3); err != nil {
		t.Errorf("docs/sessions.md:%d: the watch printed %q: %v", line, m[1], err)
	}
	if cg != "" {
		if !strings.Contains(stderr, "cgroup="+cg) {
			t.Errorf("the recipe's agent did not use the test's cgroup %s (FIFOBRIDGE_CGROUP); its log:\n%s", cg, stderr)
		}
		requireNoCgroups(t, cg, hangTimeout)
	}
	if fifos := fifosUnder(tmp); len(fifos) > 0 {
		t.Errorf("docs/sessions.md:%d: the recipe left FIFOs behind: %v", line, fifos)
	}
}

// consecutiveSteps checks that lines are "step N" lines, N counting up by
// one from at least from: what a watch prints that began after step
// from-1 was written.
func consecutiveSteps(lines string, from int) error {
	prev := 0
	for _, l := range strings.Split(strings.TrimSuffix(lines, "\n"), "\n") {
		n, err := strconv.Atoi(strings.TrimPrefix(l, "step "))
		switch {
		case err != nil:
			return fmt.Errorf("%q is no step", l)
		case prev == 0 && n < from:
			return fmt.Errorf("step %d was written before the watch began", n)
		case prev != 0 && n != prev+1:
			return fmt.Errorf("step %d follows step %d: a step is missing or repeated", n, prev)
		}
		prev = n
	}
	return nil
}

// askAgentShellPrompt opens the recipe's shell with the recipe's PS1 and
// -prompt, as its open does, and asks it through the client, which reads
// the turn's end frame: the prompt's groups must be the command's status
// and the directory it left the shell in, one whose name holds "] $ ".
func askAgentShellPrompt(t *testing.T, script string, line int) {
	checkLeaks(t, true)
	ps1, prompt := shellAssignment(script, "ps1"), shellAssignment(script, "prompt")
	if ps1 == "" || prompt == "" {
		t.Fatalf("docs/sessions.md:%d: the recipe sets no ps1='...' or prompt='...' line", line)
	}
	a := startSessionsAgent(t, []string{"-allow-args", "-stderr", "out"}, nil)
	a.host("open", "-tty", "-env", "PS1="+ps1, "-prompt", prompt, "sh", "--", "bash", "--norc", "-i").requireCode(t, "open", 0, "")
	odd := filepath.Join(t.TempDir(), "a] $ b")
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	var answer strings.Builder
	res, err := client.Ask(ctx, client.AskOptions{Dir: a.dir, Session: "sh", Input: []byte("cd '" + odd + "' && echo here && false"), Limit: hangTimeout, Stdout: &answer})
	if err != nil {
		t.Fatalf("ask: %v", err)
	}
	status := -1
	if res.Status != nil {
		status = *res.Status
	}
	if answer.String() != "here\n" || status != 1 || res.Prompt["status"] != "1" || res.Prompt["cwd"] != odd {
		t.Errorf("docs/sessions.md:%d: the recipe's prompt gave the answer %q, status %d (-1: none) and groups %q; want \"here\\n\", 1 and {status: 1, cwd: %s}", line, answer.String(), status, res.Prompt, odd)
	}
	a.host("close", "-all").requireCode(t, "close -all", 0, "")
	if code := a.stop(); code != 0 {
		t.Errorf("agent exit code %d, want 0", code)
	}
}

// shellAssignment returns the value of the line NAME='VALUE' in script, or
// "" without one.
func shellAssignment(script, name string) string {
	m := regexp.MustCompile(`(?m)^` + name + `='([^']*)'`).FindStringSubmatch(script)
	if m == nil {
		return ""
	}
	return m[1]
}
