//go:build linux

package test

// Black-box tests of fifobridge watch (issue 34): a session watched by
// several `fifobridge watch` at once and by one that never reads, each
// way a watch ends, a terminal's output cleaned or raw, and who may
// watch.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	helpers["paced"] = helperPaced
}

// patternLine is the width of a line of pattern.
const patternLine = 64

// pattern is n bytes of numbered lines, each patternLine wide, so that a
// byte lost, repeated or moved shows.
func pattern(n int) []byte {
	b := make([]byte, 0, n+patternLine)
	for k := 0; len(b) < n; k++ {
		b = fmt.Appendf(b, "%08d:%s\n", k, bytes.Repeat([]byte{byte('a' + k%26)}, patternLine-10))
	}
	return b[:n]
}

// helperPaced CTL is a REPL with the prompt "> ": "echo WORDS" prints
// WORDS; "big N B" prints pattern(N) in blocks of B bytes, and after
// each block but the last reads one byte from the FIFO CTL, so that the
// test says when the next block comes; "exit N" exits N.
func helperPaced(args []string) int {
	var ctl *os.File
	os.Stdout.WriteString("> ")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) == 3 && f[0] == "big":
			if ctl == nil {
				var err error
				if ctl, err = os.OpenFile(args[0], os.O_RDWR, 0); err != nil {
					fmt.Println(err)
					return 1
				}
			}
			n, block := atoi(f[1]), atoi(f[2])
			p := pattern(n)
			for off := 0; off < n; off += block {
				os.Stdout.Write(p[off:min(n, off+block)])
				if off+block < n {
					ctl.Read(make([]byte, 1))
				}
			}
		case len(f) == 2 && f[0] == "exit":
			return atoi(f[1])
		case len(f) > 0 && f[0] == "echo":
			fmt.Println(strings.Join(f[1:], " "))
		}
		os.Stdout.WriteString("> ")
	}
	return 0
}

// hostProc is a host command that runs while the test goes on: its
// stdout is collected as it comes, and each read is told on more.
type hostProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	more   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	out    []byte
	stderr strings.Builder
	code   int
}

// startHost starts `fifobridge ARGS...` as cred (nil: as this process).
func startHost(t *testing.T, cred *syscall.Credential, args ...string) *hostProc {
	t.Helper()
	p := &hostProc{t: t, more: make(chan struct{}, 1), done: make(chan struct{})}
	p.cmd = exec.Command(agentBin, args...)
	p.cmd.Env = agentEnv(t)
	p.cmd.SysProcAttr = dieWithTest()
	p.cmd.SysProcAttr.Credential = cred
	p.cmd.Stderr = &p.stderr
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = w
	err = p.cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			p.mu.Lock()
			p.out = append(p.out, buf[:n]...)
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
			if err != nil {
				break
			}
		}
		r.Close()
		p.cmd.Wait()
		p.code = exitCode(p.cmd.ProcessState)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// got is what the command printed so far.
func (p *hostProc) got() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.out)
}

// waitFor waits until the command printed at least n bytes.
func (p *hostProc) waitFor(n int) {
	p.t.Helper()
	deadline := time.NewTimer(hangTimeout)
	defer deadline.Stop()
	for len(p.got()) < n {
		select {
		case <-p.more:
		case <-p.done:
			p.t.Fatalf("%q exited %d after %d bytes of %d; stderr: %s", p.cmd.Args, p.code, len(p.got()), n, p.stderr.String())
		case <-deadline.C:
			p.t.Fatalf("%q printed %d bytes of %d within %v", p.cmd.Args, len(p.got()), n, hangTimeout)
		}
	}
}

// wait waits for the command's exit, at most limit, and returns its code.
func (p *hostProc) wait(limit time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		p.t.Fatalf("%q did not exit within %v; stderr: %s", p.cmd.Args, limit, p.stderr.String())
		return 0
	}
}

// sessionWatchers is how many watches the status file counts for
// session name.
func (a *agent) sessionWatchers(name string) int {
	for _, s := range a.statusSessions() {
		if s["name"] == name {
			c, _ := s["child"].(map[string]any)
			n, _ := c["watchers"].(float64)
			return int(n)
		}
	}
	return -1
}

// waitWatchers waits until the status file counts n watches of session
// name.
func (a *agent) waitWatchers(name string, n int) {
	a.t.Helper()
	a.waitStatus(fmt.Sprintf("%d watchers of %s", n, name), func(status) bool { return a.sessionWatchers(name) == n })
}

// agentCounts are the agent's descriptors and goroutines now, as /proc
// and its status file tell them.
func (a *agent) agentCounts() (fds, goroutines int) {
	a.t.Helper()
	st, err := a.readStatus()
	if err != nil || st.Goroutines == nil {
		a.t.Fatalf("the status file reports no goroutines: %v", err)
	}
	return fdCount(strconv.Itoa(a.pid)), *st.Goroutines
}

// requireCountsBack fails unless the agent's descriptors and goroutines
// come back to fds and goroutines.
func (a *agent) requireCountsBack(fds, goroutines int) {
	a.t.Helper()
	var f, g int
	if !eventually(hangTimeout, func() bool {
		st, err := a.readStatus()
		f = fdCount(strconv.Itoa(a.pid))
		return err == nil && st.Goroutines != nil && *st.Goroutines <= goroutines && f <= fds && func() bool { g = *st.Goroutines; return true }()
	}) {
		a.t.Fatalf("the agent holds %d descriptors and %d goroutines after the watches, %d and %d before:\n%s",
			f, g, fds, goroutines, fdTargets(strconv.Itoa(a.pid)))
	}
}

// rawWatch writes a watch line of its own for session name into DIR/in,
// naming a reply FIFO it made and opened, which the test reads (or does
// not) as it likes.
func rawWatch(t *testing.T, a *agent, name string) *os.File {
	t.Helper()
	path := filepath.Join(a.dir, "replies", "stuck-watcher")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
	r, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	a.writeLine(a.in, map[string]any{"id": "w4", "reply": "stuck-watcher", "op": "watch", "session": name})
	return r
}

// Issue 34, test 5: three watchers of one session and a fourth that
// never reads. The child writes 4 MiB, each block once the three have
// the one before: the three get every byte, in order; the child and an
// asker of the same output are not held up by the fourth (its whole
// answer comes while the fourth still reads nothing); and the fourth's
// lost frames count what it did not get. Afterwards the agent holds the
// descriptors and goroutines it held before.
func TestWatchFanOut(t *testing.T) {
	checkLeaks(t, true)
	ctl := filepath.Join(t.TempDir(), "ctl")
	if err := unix.Mkfifo(ctl, 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, agentConfig{flags: []string{"-mode", "sessions", "-prompt", `^> $`}, helper: "paced", program: helperProgram(ctl)})
	a.waitStatus("sessions mode serving", func(st status) bool { return st.Mode == "sessions" && st.State == "running" })
	fds, goroutines := a.agentCounts()
	a.mustOpen("s", nil)

	var watchers []*hostProc
	for range 3 {
		watchers = append(watchers, startHost(t, nil, "watch", "-dir", a.dir, "-session", "s"))
	}
	stuck := rawWatch(t, a, "s")
	a.waitWatchers("s", 4)
	// The child's pace: a block once the three have the one before. It
	// holds the FIFO open for reading from its first "big"; so does the
	// test, so that its writes never wait for an open.
	c, err := os.OpenFile(ctl, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const total, block = 4 << 20, 256 << 10
	want := pattern(total)
	ask := startHost(t, nil, "ask", "-dir", a.dir, "-session", "s", "-timeout", "60s", fmt.Sprintf("big %d %d", total, block))
	for end := block; end < total; end += block {
		for _, w := range watchers {
			w.waitFor(end)
		}
		if _, err := c.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	// The ask ends at the child's prompt while the fourth reads nothing.
	if code := ask.wait(hangTimeout + busySlack); code != 0 {
		t.Fatalf("the ask exited %d; stderr: %s", code, ask.stderr.String())
	}
	if got := ask.got(); !bytes.Equal(got, want) {
		t.Fatalf("the asker got %d bytes, not the %d of the pattern", len(got), len(want))
	}
	for i, w := range watchers {
		w.waitFor(total + len("> "))
		if got := w.got(); !bytes.Equal(got, append(want[:total:total], "> "...)) {
			t.Fatalf("watcher %d got %d bytes that are not the pattern and the prompt", i, len(got))
		}
	}
	r := bufio.NewReader(stuck)
	got, lost := readStuck(t, r, stuck, total+len("> "))
	if lost == 0 || len(got)+lost != total+len("> ") || !bytes.Equal(got, want[:len(got)]) {
		t.Fatalf("the fourth watcher got %d bytes (the pattern's first: %v) and lost %d, of %d", len(got), bytes.Equal(got, want[:min(len(got), total)]), lost, total+2)
	}

	a.host("close", "s").requireCode(t, "close", 0, "")
	if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"type":"closed"`) {
		t.Fatalf("the fourth watcher's last frame: %q, %v; want closed", line, err)
	}
	for i, w := range watchers {
		if code := w.wait(hangTimeout); code != 0 {
			t.Fatalf("watcher %d exited %d after the close; stderr: %s", i, code, w.stderr.String())
		}
	}
	stuck.Close()
	os.Remove(filepath.Join(a.dir, "replies", "stuck-watcher"))
	a.requireCountsBack(fds, goroutines)
	a.stop()
	requireNoReplies(t, a.dir)
}

// readStuck reads, from r on f, the frames of a watch that did not read
// until now, until its output and lost bytes add up to n; it returns the
// output and how many bytes its lost frames count.
func readStuck(t *testing.T, r *bufio.Reader, f *os.File, n int) (got []byte, lost int) {
	t.Helper()
	f.SetReadDeadline(time.Now().Add(hangTimeout))
	for first := true; len(got)+lost < n; first = false {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("the fourth watcher's frames ended after %d bytes and %d lost: %v", len(got), lost, err)
		}
		var fr struct {
			Type  string `json:"type"`
			Data  string `json:"data"`
			Bytes int    `json:"bytes"`
		}
		if err := json.Unmarshal(line, &fr); err != nil {
			t.Fatalf("frame %q: %v", line, err)
		}
		switch {
		case first && fr.Type == "watching":
		case fr.Type == "output":
			got = append(got, fr.Data...)
		case fr.Type == "lost":
			lost += fr.Bytes
		default:
			t.Fatalf("frame %q after %d bytes and %d lost", line, len(got), lost)
		}
	}
	return got, lost
}

// startPaced starts a sessions agent whose sessions run the paced REPL,
// with flags, in dir ("": a fresh one), and waits until it serves. It
// sweeps the reply FIFOs of killed clients within a second.
func startPaced(t *testing.T, dir string, flags ...string) *agent {
	t.Helper()
	ctl := filepath.Join(t.TempDir(), "ctl")
	a := startAgent(t, agentConfig{dir: dir, flags: append([]string{"-mode", "sessions"}, flags...), helper: "paced", program: helperProgram(ctl),
		env: []string{sweepEnv}})
	a.waitStatus("sessions mode serving", func(st status) bool { return st.Mode == "sessions" && st.State == "running" })
	return a
}

// typeInto writes text into session name's input FIFO.
func (a *agent) typeInto(name, text string) {
	a.t.Helper()
	a.writeWire(a.sessionFile(name, "in"), []byte(text))
}

// Each way a watch ends: with the child it followed (its exit status,
// though the session goes on with a restarted child, which a new watch
// follows), with the session's close (0), with -timeout (124) and INT
// (130); a watch client that goes away, even killed, is forgotten at
// once.
func TestWatchEnds(t *testing.T) {
	checkLeaks(t, true)
	a := startPaced(t, "", "-restart", "on-failure")
	fds, goroutines := a.agentCounts()
	a.mustOpen("s", nil)

	w := startHost(t, nil, "watch", "-dir", a.dir, "-session", "s")
	a.waitWatchers("s", 1)
	a.typeInto("s", "echo one\nexit 7\n")
	if code := w.wait(hangTimeout); code != 7 || string(w.got()) != "one\n> " {
		t.Fatalf("a watch of a child that exited 7 exited %d with %q; stderr: %s", code, w.got(), w.stderr.String())
	}
	a.waitStatus("the restarted child, unwatched", func(status) bool {
		for _, s := range a.statusSessions() {
			c, _ := s["child"].(map[string]any)
			if s["name"] == "s" && c["restarts"] == 1.0 && c["watchers"] == nil && s["state"] == "running" {
				return true
			}
		}
		return false
	})
	w = startHost(t, nil, "watch", "-dir", a.dir, "-session", "s")
	a.waitWatchers("s", 1)
	a.typeInto("s", "echo two\n")
	w.waitFor(len("two\n> "))
	a.host("close", "s").requireCode(t, "close", 0, "")
	if code := w.wait(hangTimeout); code != 0 || string(w.got()) != "two\n> " {
		t.Fatalf("a watch of a session closed exited %d with %q; stderr: %s", code, w.got(), w.stderr.String())
	}

	a.mustOpen("s", nil)
	a.host("watch", "-session", "s", "-timeout", "300ms").requireCode(t, "watch -timeout", 124, "timed out")
	a.waitWatchers("s", 0)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		w = startHost(t, nil, "watch", "-dir", a.dir, "-session", "s")
		a.waitWatchers("s", 1)
		w.cmd.Process.Signal(sig)
		if code, want := w.wait(hangTimeout), 128+int(sig); code != want {
			t.Fatalf("watch ended by %v exited %d, want %d", sig, code, want)
		}
		a.waitWatchers("s", 0)
	}
	a.host("close", "s").requireCode(t, "close", 0, "")
	a.requireCountsBack(fds, goroutines)
	// The killed watch left its reply FIFO, which the sweep removes.
	if !eventually(hangTimeout, func() bool { return len(replyNames(t, a.dir)) == 0 }) {
		requireNoReplies(t, a.dir)
	}
	a.stop()
}

// Watching is reading: in a shared directory whose -perm lets others
// write the input FIFOs but not read the output FIFOs (0662), a member
// of the directory's group watches a session, and a stranger, who may
// write the control FIFO, is refused with 125 and one line, and gets
// nothing of the output.
func TestWatchReaders(t *testing.T) {
	requireRoot(t)
	for _, cred := range []*syscall.Credential{member, stranger} {
		requireReachable(t, cred)
	}
	checkLeaks(t, true)
	a := startPaced(t, groupDir(t, 0, 0o771|os.ModeSetgid), "-perm", "0662")
	a.mustOpen("s", nil)

	w := startHost(t, member, "watch", "-dir", a.dir, "-session", "s")
	a.waitWatchers("s", 1)
	a.typeInto("s", "echo shared\n")
	w.waitFor(len("shared\n> "))

	res := runAs(t, stranger, nil, "watch", "-dir", a.dir, "-session", "s")
	if res.code != 125 || res.stdout != "" || strings.Count(res.stderr, "\n") != 1 || !strings.Contains(res.stderr, "watching is reading") {
		t.Fatalf("watch as a stranger exited %d with stdout %q and stderr %q; want 125, nothing, one line", res.code, res.stdout, res.stderr)
	}
	if n := a.sessionWatchers("s"); n != 1 {
		t.Fatalf("%d watchers after the stranger's, want the member's alone", n)
	}
	a.host("close", "s").requireCode(t, "close", 0, "")
	if code := w.wait(hangTimeout); code != 0 || string(w.got()) != "shared\n> " {
		t.Fatalf("the member's watch exited %d with %q; stderr: %s", code, w.got(), w.stderr.String())
	}
	a.stop()
	requireNoReplies(t, a.dir)
}

// agentWatchers is how many watches the status file counts for a stream
// agent's child.
func (a *agent) agentWatchers() int {
	a.t.Helper()
	b, err := os.ReadFile(a.status)
	if err != nil {
		return -1
	}
	var st struct {
		Child struct {
			Watchers int `json:"watchers"`
		} `json:"child"`
	}
	if json.Unmarshal(b, &st) != nil {
		return -1
	}
	return st.Child.Watchers
}

// Stream mode: watch follows the one child through DIR/control. On pipes
// it gets the output as written and ends with the child's exit (its
// status; the restarted child goes on); on a terminal it gets the output
// cleaned as ask's answers are, or with -raw as written; the agent's stop
// ends it with 0.
func TestWatchStream(t *testing.T) {
	t.Run("pipes", func(t *testing.T) {
		checkLeaks(t, true)
		ctl := filepath.Join(t.TempDir(), "ctl")
		a := startAgent(t, agentConfig{helper: "paced", program: helperProgram(ctl)})
		a.waitChild()
		w := startHost(t, nil, "watch", "-dir", a.dir)
		a.waitStatus("a watcher", func(status) bool { return a.agentWatchers() == 1 })
		a.writeWire(a.in, []byte("echo hi\nexit 5\n"))
		if code := w.wait(hangTimeout); code != 5 || string(w.got()) != "hi\n> " {
			t.Fatalf("watch of a stream child that exited 5 exited %d with %q; stderr: %s", code, w.got(), w.stderr.String())
		}
		if got := string(openReader(t, a.out).readN(len("> hi\n> "))); got != "> hi\n> " {
			t.Fatalf("out had %q", got)
		}
		a.waitStatus("the restarted child, unwatched", func(st status) bool {
			return st.Child.Restarts == 1 && st.State == "running" && a.agentWatchers() == 0
		})
		w = startHost(t, nil, "watch", "-dir", a.dir)
		a.waitStatus("a watcher", func(status) bool { return a.agentWatchers() == 1 })
		a.stop()
		if code := w.wait(hangTimeout); code != 0 {
			t.Fatalf("a watch of a stream whose agent stopped exited %d; stderr: %s", code, w.stderr.String())
		}
		requireNoReplies(t, a.dir)
	})
	t.Run("terminal", func(t *testing.T) {
		checkLeaks(t, true)
		a := startAgent(t, agentConfig{flags: []string{"-tty"}, env: []string{"PS1=$ "}, program: []string{busybox, "sh", "-i"}})
		a.waitChild()
		clean := startHost(t, nil, "watch", "-dir", a.dir)
		raw := startHost(t, nil, "watch", "-dir", a.dir, "-raw")
		a.waitStatus("two watchers", func(status) bool { return a.agentWatchers() == 2 })
		a.writeWire(a.in, []byte(`printf '\033[1mbold\033[0m\n'; echo done`+"\n"))
		waitText(t, clean, "bold\ndone\n")
		waitText(t, raw, "\x1b[1mbold\x1b[0m\r\ndone\r\n")
		if got := string(clean.got()); strings.Contains(got, "\x1b") || strings.Contains(got, "\r\n") {
			t.Fatalf("the clean watch printed %q", got)
		}
		a.stop()
		for _, w := range []*hostProc{clean, raw} {
			if code := w.wait(hangTimeout); code != 0 {
				t.Fatalf("a watch of a stream whose agent stopped exited %d; stderr: %s", code, w.stderr.String())
			}
		}
		requireNoReplies(t, a.dir)
	})
}

// waitText waits until p printed text.
func waitText(t *testing.T, p *hostProc, text string) {
	t.Helper()
	deadline := time.NewTimer(hangTimeout)
	defer deadline.Stop()
	for !strings.Contains(string(p.got()), text) {
		select {
		case <-p.more:
		case <-p.done:
			t.Fatalf("%q exited %d with %q, without %q", p.cmd.Args, p.code, p.got(), text)
		case <-deadline.C:
			t.Fatalf("%q printed %q within %v, without %q", p.cmd.Args, p.got(), hangTimeout, text)
		}
	}
}
