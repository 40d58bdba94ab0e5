//go:build linux

package test

// Tests of "Sharing the directory safely" against a member of the
// directory's group who renames and makes entries of DIR (issue 26): it
// swaps DIR/in and DIR/ask, so that an ask line would reach the child's
// stdin and, through its echo, the output FIFO the group reads; or it
// squats a fresh sticky DIR before the agent's first start with an input
// FIFO, an output FIFO and a replies/ of its own, and answers itself.
// No line of another member's reaches it, no forged frame reaches
// another member's send or ask.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	helpers["swapper"] = helperSwapper
	helpers["squatter"] = helperSquatter
}

// secretMark is in every ask a victim makes: a line of it on the output
// FIFO means the child read a victim's request.
const secretMark = "SECRET-7c1e"

// TestPermSwappedInputs: in the README's group directory (2770: members
// may rename its entries), a member swaps DIR/in and DIR/ask while a
// conversation with python3 serves them, and reads the output FIFO, where
// python3 would echo an ask line that reached its stdin, naming the
// reply FIFO. The other member's ask refuses (125, one line) and writes
// nothing: the child never sees its line, nothing is forged. Once the
// names are swapped back, asks are answered again: the agent kept
// serving each FIFO as what it was.
func TestPermSwappedInputs(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	requirePython(t)
	for _, tc := range []struct {
		name  string
		agent *syscall.Credential // nil: root
		owner uint32              // DIR's owner
	}{
		{"agent not root", groupAgent, groupAgent.Uid},
		{"root agent", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cred := range []*syscall.Credential{groupAgent, member, intruder} {
				requireReachable(t, cred)
			}
			checkLeaks(t, false)
			dir := groupDir(t, tc.owner, 0o770|os.ModeSetgid)
			a := startAgent(t, agentConfig{dir: dir, cred: tc.agent,
				flags: []string{"-prompt", pythonPrompt, "-stderr", "out"}, program: []string{"python3", "-i", "-q"}})
			askAs := func(what string) hostResult {
				return runAs(t, member, nil, "ask", "-dir", dir, "-wait", "10s", "-timeout", "5s", what)
			}
			if res := askAs("print(6*7)"); res.code != 0 || res.stdout != "42\n" {
				t.Fatalf("ask exited %d printing %q, want 0 and 42; stderr:\n%s", res.code, res.stdout, res.stderr)
			}
			s := startSwapper(t, dir)
			for i := 0; i < 3; i++ {
				res := askAs(fmt.Sprintf("print('%s-%d')", secretMark, i))
				if res.code != 125 || res.stdout != "" || !strings.Contains(res.stderr, "not the FIFO the agent serves") {
					t.Errorf("ask (try %d) with DIR/in and DIR/ask swapped exited %d printing %q, want 125, nothing and a line saying why; stderr:\n%s",
						i, res.code, res.stdout, res.stderr)
				} else {
					requireOneLine(t, "ask", res.stderr)
				}
			}
			report := s.stop(t)
			for _, want := range []string{"swap: ok", "seen: 0", "forged: 0"} {
				if !strings.Contains(report, want+"\n") {
					t.Errorf("the intruder's report does not say %q:\n%s", want, report)
				}
			}
			if res := askAs("print(6*8)"); res.code != 0 || res.stdout != "48\n" {
				t.Errorf("ask with the names swapped back exited %d printing %q, want 0 and 48; stderr:\n%s", res.code, res.stdout, res.stderr)
			}
			a.waitLog("still serving the old fifo", "path="+filepath.Join(dir, "ask"))
			requireNoReplies(t, dir)
		})
	}
}

// swapper is the intruder swapping DIR/in and DIR/ask (helperSwapper).
type swapper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   syncBuffer
}

// syncBuffer is a strings.Builder that a process writes while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startSwapper starts helper NAME DIR as the intruder and waits for its
// first line, which says it is at work.
func startIntruder(t *testing.T, name, dir string) *swapper {
	t.Helper()
	s := &swapper{cmd: exec.Command(sharedBin(t), dir)}
	s.cmd.Env = append(agentEnv(t), helperEnv+"="+name)
	s.cmd.SysProcAttr = dieWithTest()
	s.cmd.SysProcAttr.Credential = intruder
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stdin.Close(); s.cmd.Wait() })
	if !eventually(hangTimeout, func() bool { return strings.Contains(s.out.String(), "\n") }) {
		t.Fatalf("the intruder did not start: %s", s.out.String())
	}
	return s
}

func startSwapper(t *testing.T, dir string) *swapper {
	t.Helper()
	s := startIntruder(t, "swapper", dir)
	if !strings.Contains(s.out.String(), "swap: ok\n") {
		t.Fatalf("the intruder could not swap DIR/in and DIR/ask: %s", s.out.String())
	}
	return s
}

// stop ends the intruder and returns its report.
func (s *swapper) stop(t *testing.T) string {
	t.Helper()
	s.stdin.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("the intruder: %v; output:\n%s", err, s.out.String())
	}
	return s.out.String()
}

// helperSwapper DIR is a member of DIR's group after the others' asks. It
// swaps DIR/in and DIR/ask (three renames) and prints "swap: " (ok or the
// error); then it reads the output FIFO, counts the lines that carry
// secretMark, and answers every ask it finds there (as JSON, or as python
// echoes a dict) on the reply FIFO it names, falsely. When its stdin
// closes it swaps the names back and prints "seen: N" and "forged: N".
func helperSwapper(args []string) int {
	dir := args[0]
	swap := func() error {
		in, ask, x := filepath.Join(dir, "in"), filepath.Join(dir, "ask"), filepath.Join(dir, ".x")
		if err := os.Rename(in, x); err != nil {
			return err
		}
		if err := os.Rename(ask, in); err != nil {
			return err
		}
		return os.Rename(x, ask)
	}
	err := swap()
	fmt.Println("swap:", okOrError(err))
	if err != nil {
		return 1
	}
	out, err := os.OpenFile(filepath.Join(dir, "out"), os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		fmt.Println("open out:", okOrError(err))
		return 1
	}
	var seen, forged atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		readTranscript(out, filepath.Join(dir, "replies"), &seen, &forged)
	}()
	io.Copy(io.Discard, os.Stdin) // until the test closes it
	out.Close()
	<-done
	fmt.Println("swap back:", okOrError(swap()))
	fmt.Println("seen:", seen.Load())
	fmt.Println("forged:", forged.Load())
	return 0
}

// askInTranscript finds an ask's id and reply FIFO in a line of the
// output FIFO: its JSON, or python's echo of it as a dict.
var askInTranscript = regexp.MustCompile(`['"]id['"]:\s*['"]([^'"]+)['"],\s*['"]reply['"]:\s*['"]([^'"/]+)['"]`)

// readTranscript reads out until it is closed, counting the lines that
// carry secretMark in seen, and answers every ask it finds there.
func readTranscript(out *os.File, replies string, seen, forged *atomic.Int64) {
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 2<<20)
	for lines.Scan() {
		line := lines.Text()
		if strings.Contains(line, secretMark) {
			seen.Add(1)
		}
		for _, m := range askInTranscript.FindAllStringSubmatch(line, -1) {
			if forgeAnswer(replies, "ask", m[1], m[2]) {
				forged.Add(1)
			}
		}
	}
}

// forgeAnswer writes a forged answer (kind ask) or output (in) and its end
// under id into the reply FIFO name of replies, and says whether it could.
func forgeAnswer(replies, kind, id, name string) bool {
	q, _ := json.Marshal(id)
	frames := fmt.Sprintf(`{"id":%s,"type":"stdout","data":"FORGED\n"}`+"\n"+`{"id":%s,"type":"exit","code":0,"duration_ms":1}`+"\n", q, q)
	if kind == "ask" {
		frames = fmt.Sprintf(`{"id":%s,"type":"answer","data":"FORGED\n"}`+"\n"+`{"id":%s,"type":"end","ready":true,"duration_ms":1}`+"\n", q, q)
	}
	w, err := os.OpenFile(filepath.Join(replies, name), os.O_WRONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer w.Close()
	_, err = w.WriteString(frames)
	return err == nil
}

// TestPermSquattedDir: in a fresh root:GROUP directory of mode 3770
// (sticky: members cannot remove each other's entries, but may make
// their own), a member comes before the agent's first start with DIR/in,
// DIR/ask, DIR/out and a replies/ of its own (1733), and answers every
// request itself. The other member's send and ask refuse (125, one line
// saying what setup to use): a replies/ that does not belong to DIR's
// owner, in a DIR others may write, may not be the agent's. Nothing is
// forged.
func TestPermSquattedDir(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	for _, cred := range []*syscall.Credential{member, intruder} {
		requireReachable(t, cred)
	}
	checkLeaks(t, false)
	dir := groupDir(t, 0, 0o770|os.ModeSetgid|os.ModeSticky)
	s := startIntruder(t, "squatter", dir)
	if !strings.Contains(s.out.String(), "squat: ok\n") {
		t.Fatalf("the intruder could not squat DIR: %s", s.out.String())
	}
	for _, args := range [][]string{
		{"send", "-dir", dir, "-timeout", "5s", secretMark},
		{"ask", "-dir", dir, "-timeout", "5s", secretMark},
	} {
		res := runAs(t, member, nil, args...)
		if res.code != 125 || res.stdout != "" || !strings.Contains(res.stderr, "owned by the agent's user") {
			t.Errorf("%s in a squatted DIR exited %d printing %q, want 125, nothing and a line naming the setup; stderr:\n%s",
				args[0], res.code, res.stdout, res.stderr)
		} else {
			requireOneLine(t, args[0], res.stderr)
		}
	}
	report := s.stop(t)
	for _, want := range []string{"seen: 0", "forged: 0"} {
		if !strings.Contains(report, want+"\n") {
			t.Errorf("the intruder's report does not say %q:\n%s", want, report)
		}
	}
}

// helperSquatter DIR makes, in a DIR no agent has served yet, the FIFOs
// in and ask (0620), out (0640) and replies/ (1733) of its own, prints
// "squat: " (ok or the error), and plays the agent: every line it reads
// on in or ask it answers falsely on the reply FIFO the line names. When
// its stdin closes it prints "seen: N" (the lines carrying secretMark)
// and "forged: N".
func helperSquatter(args []string) int {
	dir := args[0]
	var ends []*os.File
	err := func() error {
		for name, mode := range map[string]uint32{"in": 0o620, "ask": 0o620, "out": 0o640} {
			p := filepath.Join(dir, name)
			if err := unix.Mkfifo(p, 0o600); err != nil {
				return err
			}
			if err := unix.Chmod(p, mode); err != nil {
				return err
			}
		}
		replies := filepath.Join(dir, "replies")
		if err := os.Mkdir(replies, 0o700); err != nil {
			return err
		}
		if err := os.Chmod(replies, 0o733|os.ModeSticky); err != nil {
			return err
		}
		for _, name := range []string{"in", "ask"} {
			f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|unix.O_NONBLOCK, 0)
			if err != nil {
				return err
			}
			ends = append(ends, f)
		}
		return nil
	}()
	fmt.Println("squat:", okOrError(err))
	var seen, forged atomic.Int64
	var wg sync.WaitGroup
	for i, f := range ends {
		kind := []string{"in", "ask"}[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines := bufio.NewScanner(f)
			lines.Buffer(nil, 2<<20)
			for lines.Scan() {
				var req struct{ ID, Reply string }
				if strings.Contains(lines.Text(), secretMark) {
					seen.Add(1)
				}
				if json.Unmarshal(lines.Bytes(), &req) == nil && req.Reply != "" && !strings.Contains(req.Reply, "/") &&
					forgeAnswer(filepath.Join(dir, "replies"), kind, req.ID, req.Reply) {
					forged.Add(1)
				}
			}
		}()
	}
	io.Copy(io.Discard, os.Stdin) // until the test closes it
	for _, f := range ends {
		f.SetReadDeadline(time.Unix(1, 0)) // ends the scan: the Go poller serves f
	}
	wg.Wait()
	for _, f := range ends {
		f.Close()
	}
	fmt.Println("seen:", seen.Load())
	fmt.Println("forged:", forged.Load())
	return 0
}
