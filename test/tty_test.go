//go:build linux

package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/testgate"
	"golang.org/x/sys/unix"
)

// Terminal mode (-tty), as CONTRACT.md's "Terminal mode" describes it.

// ttyLine returns the next line of a terminal's output, less its "\r".
func (e *fifoEnd) ttyLine() string {
	e.t.Helper()
	return strings.TrimRight(e.readLine(), "\r")
}

// waitTTYLine reads lines until one contains want and returns it; the
// lines before it (the terminal's echo of the input, mostly) are skipped.
func (e *fifoEnd) waitTTYLine(want string) string {
	e.t.Helper()
	var seen []string
	for range 200 {
		line := e.ttyLine()
		if strings.Contains(line, want) {
			return line
		}
		seen = append(seen, line)
	}
	e.t.Fatalf("no line with %q in the terminal's output; got %q", want, seen)
	return ""
}

// ttyStatus is the terminal part of the status file.
type ttyStatus struct {
	Child struct {
		TTY *struct {
			Cols int `json:"cols"`
			Rows int `json:"rows"`
		} `json:"tty"`
	} `json:"child"`
}

func (a *agent) ttySize() (cols, rows int, ok bool) {
	b, err := os.ReadFile(a.status)
	var st ttyStatus
	if err != nil || json.Unmarshal(b, &st) != nil || st.Child.TTY == nil {
		return 0, 0, false
	}
	return st.Child.TTY.Cols, st.Child.TTY.Rows, true
}

// terminalFDs looks at the descriptors of pid: masters names those that
// are a terminal's master (/dev/ptmx), slaves counts those that are a
// terminal (/dev/pts/N), and all counts every one.
func terminalFDs(pid int) (masters []string, slaves, all int) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		switch {
		case target == "/dev/ptmx" || target == "/dev/pts/ptmx":
			masters = append(masters, e.Name())
		case strings.HasPrefix(target, "/dev/pts/"):
			slaves++
		}
	}
	return masters, slaves, len(ents)
}

func TestTTYTerminal(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	report := filepath.Join(t.TempDir(), "fds")
	a := startAgent(t, agentConfig{
		flags: []string{"-tty", "-tty-size", "132x43", "-restart", "never"},
		// Go's runtime keeps cgroup files open for GOMAXPROCS updates
		// unless told not to.
		program: sh(t, `tty; stty size; GODEBUG=containermaxprocs=0 exec "$0" `+report+` serve`),
		helper:  "fds",
	})
	r := openReader(t, a.out)
	name := r.ttyLine()
	if !strings.HasPrefix(name, "/dev/pts/") {
		t.Fatalf("tty printed %q, want /dev/pts/N", name)
	}
	if got := r.ttyLine(); got != "43 132" {
		t.Errorf("stty size printed %q, want %q", got, "43 132")
	}
	var listing []byte
	if !eventually(hangTimeout, func() bool {
		listing, _ = os.ReadFile(report)
		return bytes.HasSuffix(listing, []byte("--\n"))
	}) {
		t.Fatalf("the child did not list its descriptors: %q", listing)
	}
	want := fmt.Sprintf("0 %s\n1 %s\n2 %s\n--\n", name, name, name)
	if string(listing) != want {
		t.Errorf("child's descriptors:\n%swant:\n%s", listing, want)
	}
	if masters, slaves, _ := terminalFDs(a.pid); len(masters) != 1 || slaves != 0 {
		t.Errorf("agent holds %d masters and %d slaves, want 1 and 0:\n%s", len(masters), slaves, fdTargets(strconv.Itoa(a.pid)))
	}
	if flags := fdFlags(t, a.pid, "/dev/ptmx"); flags&unix.O_CLOEXEC == 0 {
		t.Errorf("the agent's master lacks O_CLOEXEC (flags %#o)", flags)
	}
	a.waitStatus("tty 132x43", func(status) bool { c, r, _ := a.ttySize(); return c == 132 && r == 43 })
	a.stop()
}

// fdFlags returns the open flags of pid's descriptor on target.
func fdFlags(t *testing.T, pid int, target string) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if got, _ := os.Readlink(filepath.Join(dir, e.Name())); got != target {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
				return int(n)
			}
		}
	}
	t.Fatalf("pid %d has no descriptor on %s", pid, target)
	return 0
}

// pipeFill returns the size of the pipe f and how many bytes it holds.
func pipeFill(t *testing.T, f *os.File) (size, held int) {
	t.Helper()
	rc, err := f.SyscallConn() // not Fd: that would make f blocking
	if err != nil {
		t.Fatal(err)
	}
	var serr, herr error
	rc.Control(func(fd uintptr) {
		size, serr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
		held, herr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
	})
	if serr != nil || herr != nil {
		t.Fatalf("size of pipe %s: %v, %v", f.Name(), serr, herr)
	}
	return size, held
}

// TestTTYLineBuffered: programs that block-buffer a pipe answer each line
// at once on a terminal.
func TestTTYLineBuffered(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"tr": {busybox, "tr", "a-z", "A-Z"},
		// No -u, and PYTHONUNBUFFERED is emptied below.
		"python": {"python3", "-c", "import sys\nfor line in sys.stdin:\n    print(line.strip().upper())"},
	}
	for name, program := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(program[0]); err != nil {
				// python3 is not in every base image; tr is.
				testgate.Skip(t, "%s is not installed: %v", program[0], err)
			}
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{flags: []string{"-tty", "-restart", "never"}, program: program, env: []string{"PYTHONUNBUFFERED="}})
			w, r := openWriter(t, a.in), openReader(t, a.out)
			for i := range 5 {
				w.writeLine(fmt.Sprintf("line %d", i))
				r.waitTTYLine(fmt.Sprintf("LINE %d", i)) // before the next is sent
			}
			a.stop()
		})
	}
}

func TestTTYControlCharacters(t *testing.T) {
	t.Parallel()
	t.Run("InterruptForeground", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-tty", "-restart", "never"},
			program: sh(t, `trap 'echo trapped INT' INT; echo ready; sleep 30; echo after`)})
		r := openReader(t, a.out)
		r.waitTTYLine("ready")
		// The shell must be waiting for sleep: an INT that comes between
		// its fork and sleep's exec is lost with the shell's own handler.
		shell := a.waitChild()
		if !eventually(hangTimeout, func() bool {
			kids := childrenOf(shell)
			return len(kids) == 1 && kids[0].comm == "sleep"
		}) {
			t.Fatalf("the shell %d never ran sleep", shell)
		}
		openWriter(t, a.in).write([]byte("\x03"))
		r.waitTTYLine("trapped INT")
		r.waitTTYLine("after")
		if code := a.wait(hangTimeout); code != 0 {
			t.Errorf("agent exited %d, want 0", code)
		}
	})
	t.Run("EndOfFile", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-tty", "-restart", "never"}, program: []string{busybox, "cat"}})
		w, r := openWriter(t, a.in), openReader(t, a.out)
		w.writeLine("abc")
		r.waitTTYLine("abc")
		w.write([]byte("\x04"))
		if code := r.drainUntilExit(a, hangTimeout); code != 0 {
			t.Errorf("agent exited %d after cat saw end-of-file, want 0", code)
		}
	})
}

func TestTTYWinsize(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-tty", "-restart", "never"},
		program: sh(t, `trap 'stty size' WINCH; echo ready; while :; do sleep 0.05; done`)})
	r := openReader(t, a.out)
	r.waitTTYLine("ready")
	winsize := filepath.Join(a.dir, "winsize")
	writeFile(t, winsize, "120x40\n")
	r.waitTTYLine("40 120")
	a.waitStatus("tty 120x40", func(status) bool { c, rows, _ := a.ttySize(); return c == 120 && rows == 40 })

	// A symbolic link is not followed, whatever it points to.
	other := filepath.Join(t.TempDir(), "size")
	writeFile(t, other, "70x20\n")
	if err := os.Remove(winsize); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, winsize); err != nil {
		t.Fatal(err)
	}
	if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), "symbolic link") }) {
		t.Fatalf("no log line for a winsize that is a symbolic link")
	}
	if err := os.Remove(winsize); err != nil {
		t.Fatal(err)
	}

	const logged = "not COLSxROWS"
	writeFile(t, winsize, "garbage\n")
	if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), logged) }) {
		t.Fatalf("no log line for a winsize that does not parse")
	}
	writeFile(t, winsize, "100x30")
	r.waitTTYLine("30 100")
	if n := strings.Count(a.stderr(), logged); n != 1 {
		t.Errorf("%d log lines for one bad winsize, want 1", n)
	}
	if strings.Contains(a.stderr(), "70x20") {
		t.Errorf("the size behind a symbolic link was applied")
	}
	a.requireRunning()
	a.stop()
}

// TestTTYHangup: a process left on the terminal of a child that is gone,
// in a process group of its own (which the kernel's hangup at the session
// leader's exit does not reach), gets SIGHUP before the stop sequence
// ends it: when the child exits by itself, and when the agent is stopped
// (the job ignores the stop signal, TERM).
func TestTTYHangup(t *testing.T) {
	t.Parallel()
	for _, stopped := range []bool{false, true} {
		name := map[bool]string{false: "ChildExits", true: "AgentStopped"}[stopped]
		t.Run(name, func(t *testing.T) {
			checkLeaks(t, false)
			got := filepath.Join(t.TempDir(), "hup")
			// -stop-timeout far beyond the wait for the agent's exit: the
			// job goes by its HUP, not at the end of the stop sequence.
			a := startAgent(t, agentConfig{flags: []string{"-tty", "-restart", "never", "-stop-timeout", "60s"},
				// The job says its pid and group once its traps are set.
				program: sh(t, `set -m; (trap 'echo HUP > `+got+`; exit 0' HUP; trap '' TERM
					read -r pid _ _ _ pgid _ </proc/self/stat; echo "job $pid $pgid"; while :; do sleep 0.05; done) &
					read x; exit 0`)})
			r := openReader(t, a.out)
			job := strings.Fields(r.waitTTYLine("job "))
			if len(job) != 3 || job[1] != job[2] {
				t.Fatalf("the background job is not in a group of its own: %q", job)
			}
			want := 0
			if stopped {
				a.signal(syscall.SIGTERM)
				want = 128 + int(syscall.SIGHUP) // the shell's death by HUP, a terminal child's stop signal
			} else {
				openWriter(t, a.in).writeLine("exit")
			}
			if code := r.drainUntilExit(a, hangTimeout); code != want {
				t.Errorf("agent exited %d, want %d", code, want)
			}
			if b, err := os.ReadFile(got); string(b) != "HUP\n" {
				t.Errorf("the job left on the terminal saw %q (%v), want HUP", b, err)
			}
		})
	}
}

// TestTTYCarryOver: input waiting when a child ends goes to the next
// child's terminal. The first child does not read, so its terminal, the
// agent and the FIFO fill up; once it exits, the next child must get every
// line from some line on, none missing, up to the last. (What the first
// terminal took cannot be read back here, so a few KiB the agent read and
// dropped would go unnoticed: bridge's TestTerminalKeepsInputNoTerminalTook
// checks that exactly, with pipes for terminals.)
func TestTTYCarryOver(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	tmp := t.TempDir()
	mark, goOn := filepath.Join(tmp, "mark"), filepath.Join(tmp, "go")
	a := startAgent(t, agentConfig{flags: []string{"-tty", "-restart", "on-failure", "-backoff-min", "10ms"},
		program: sh(t, `stty raw -echo; if [ -e `+mark+` ]; then exec cat; fi; : > `+mark+`; echo first
			while [ ! -e `+goOn+` ]; do sleep 0.02; done; exit 1`)})
	r := openReader(t, a.out)
	r.waitTTYLine("first")

	const lines = 300_000 // "L0000000\n": 2.4 MB, more than the FIFO, the agent and a terminal hold
	var input bytes.Buffer
	for i := range lines {
		fmt.Fprintf(&input, "L%07d\n", i)
	}
	var written atomic.Int64
	writeErr := make(chan error, 1)
	w := openWriter(t, a.in)
	go func() {
		w.f.SetWriteDeadline(time.Now().Add(time.Minute))
		for b := input.Bytes(); len(b) > 0; {
			n, err := w.f.Write(b[:min(len(b), 4096)])
			written.Add(int64(n))
			if err != nil {
				writeErr <- err
				return
			}
			b = b[n:]
		}
		writeErr <- nil
	}()
	// Past what the FIFO holds, the agent has read input: the first
	// terminal takes a few KiB of it, the agent holds the rest.
	room, _ := pipeFill(t, w.f)
	if !eventually(hangTimeout, func() bool { return written.Load() > int64(room)+8192 }) {
		t.Fatalf("only %d bytes written: the agent does not read the input", written.Load())
	}
	writeFile(t, goOn, "")
	seen := map[int]bool{}
	for !seen[lines-1] {
		line := r.ttyLine()
		if len(line) == 8 && line[0] == 'L' {
			if n, err := strconv.Atoi(line[1:]); err == nil {
				seen[n] = true
			}
		}
	}
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	first := lines
	for n := range seen {
		first = min(first, n)
	}
	for n := first; n < lines; n++ {
		if !seen[n] {
			t.Fatalf("the next child got lines %d to %d but not line %d", first, lines-1, n)
		}
	}
	if first*9 > 1<<20 {
		t.Errorf("the next child's first line is %d: more than the old terminal could hold was lost", first)
	}
	a.stop()
}

// TestTTYRestartLeaks restarts a -tty child 1,000 times (200 with -short), some of which
// leave a process on their terminal (one that ignores SIGHUP among them):
// the agent's descriptors, its masters and its entries of /dev/pts stay
// as they were after the first few, while another process opens and
// closes terminals of its own, nothing of an old terminal survives, and
// no zombie is left.
func TestTTYRestartLeaks(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	churner := startPTYChurner(t)
	restarts := soak("", 200, 1000)
	a := startAgent(t, agentConfig{
		// -stop-signal TERM: the job that ignores SIGHUP (a terminal
		// child's default stop signal) would otherwise hold each of its
		// stops for -stop-timeout, and a stop under way holds descriptors
		// the samples below would count.
		flags: []string{"-tty", "-restart", "always", "-max-restarts", "-1", "-stop-signal", "TERM",
			"-backoff-min", "1ms", "-backoff-max", "1ms", "-stop-timeout", "2s"},
		program: binSh(`case $$ in *[05]) (trap '' HUP; exec sleep 60) & ;; *3) sleep 60 & ;; esac; exit 0`),
	})
	// sample returns the fewest descriptors and terminals of the agent's
	// and the most masters seen over many looks. Restarts never pause, and a start
	// or a stop holds a few descriptors for an instant (a slave, pidfds),
	// so the fewest is the count between them, which a leak raises by one
	// per leaking restart; slaves are looked at in TestTTYTerminal, where
	// nothing starts.
	sample := func() (fds, masters, pts int) {
		fds, pts = 1<<30, 1<<30
		for range 50 {
			m, _, all := terminalFDs(a.pid)
			fds, masters, pts = min(fds, all), max(masters, len(m)), min(pts, agentTerminals(a.pid))
			time.Sleep(2 * time.Millisecond)
		}
		return
	}
	starts := func(n int) {
		t.Helper()
		a.waitStatusWithin(fmt.Sprintf("%d starts", n), 3*time.Minute, func(st status) bool { return st.Child.Starts >= n })
	}
	starts(20)
	fds0, masters0, pts0 := sample()
	starts(restarts)
	fds1, masters1, pts1 := sample()
	if fds1 > fds0+2 || masters1 > 1 || masters0 > 1 {
		t.Errorf("after %d restarts the agent holds at least %d descriptors (at most %d masters); after 20, %d (%d):\n%s",
			restarts, fds1, masters1, fds0, masters0, fdTargets(strconv.Itoa(a.pid)))
	}
	// Of the entries of /dev/pts, the agent's: it holds one, or none for
	// an instant between two children, so one of slack, where a leak
	// would add hundreds.
	if pts1 > pts0+1 {
		t.Errorf("the agent holds at least %d terminals after %d restarts, %d after 20", pts1, restarts, pts0)
	}
	// Whatever runs now belongs to the last few terminals: all of it goes
	// within the stop timeout of their ends.
	var old []procStat
	for _, p := range markedProcs(marker(t)) {
		if p.pid != a.pid && p.pid != churner {
			old = append(old, p)
		}
	}
	if !eventually(hangTimeout, func() bool {
		for _, p := range old {
			if st, err := readStat(p.pid); err == nil && st.state != 'Z' && st.session == p.session {
				return false
			}
		}
		return true
	}) {
		t.Errorf("processes of old terminals survive:%s", describe(old))
	}
	requireNoZombies(t, a.pid)
	a.stop()
}

// waitStatusWithin is waitStatus with its own limit.
func (a *agent) waitStatusWithin(what string, limit time.Duration, cond func(status) bool) {
	a.t.Helper()
	var st status
	if !eventually(limit, func() bool {
		var err error
		st, err = a.readStatus()
		return err == nil && cond(st) || a.exited()
	}) || a.exited() {
		a.t.Fatalf("status never showed %s (exited: %v, last: %+v)", what, a.exited(), st)
	}
}

// TestTTYOutputIntegrity sends 8 MiB of text through cat on a raw terminal
// while the output reader hangs up and comes back.
func TestTTYOutputIntegrity(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	const size = 8 << 20
	var data bytes.Buffer
	rnd := rand.New(rand.NewPCG(3, 4))
	for i := 0; data.Len() < size; i++ {
		fmt.Fprintf(&data, "%08d %x\n", i, rnd.Uint64())
	}
	sent := data.Bytes()[:size]
	a := startAgent(t, agentConfig{flags: []string{"-tty", "-restart", "never"},
		program: sh(t, `stty raw -echo; echo ready; exec cat`)})
	r := openReader(t, a.out)
	r.waitTTYLine("ready")

	writeErr := make(chan error, 1)
	w := openWriter(t, a.in)
	go func() {
		w.f.SetWriteDeadline(time.Now().Add(2 * time.Minute))
		_, err := w.f.Write(sent)
		writeErr <- err
	}()
	got := make([]byte, 0, size)
	for _, cut := range []int{1, 4099, 1 << 20, 5_000_003, size} {
		for len(got) < cut {
			b, err := r.readSome(min(cut-len(got), 256<<10), time.Now().Add(hangTimeout))
			if err != nil {
				t.Fatalf("read after %d bytes: %v", len(got), err)
			}
			got = append(got, b...)
		}
		if cut < size {
			r.close()
			r = openReader(t, a.out)
		}
	}
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	r.expectQuiet(300 * time.Millisecond)
	if !bytes.Equal(got, sent) {
		i := 0
		for i < len(got) && got[i] == sent[i] {
			i++
		}
		t.Fatalf("received %d bytes that differ from the %d sent, first at offset %d", len(got), size, i)
	}
	a.stop()
}

// TestTTYStop: TERM stops a -tty child that ignores it, and a process on
// its terminal that ignores TERM and HUP, within -stop-timeout + 1 s.
func TestTTYStop(t *testing.T) {
	t.Parallel()
	for _, full := range []bool{false, true} {
		name := map[bool]string{false: "NoReader", true: "FullOutput"}[full]
		t.Run(name, func(t *testing.T) {
			checkLeaks(t, false)
			work := "sleep 60"
			if full {
				work = "yes"
			}
			a := startAgent(t, agentConfig{flags: []string{"-tty", "-stop-signal", "TERM", "-stop-timeout", "1s"},
				program: sh(t, `trap '' TERM; (trap '' TERM HUP; exec `+work+`) & exec `+work)})
			a.waitChild()
			if !eventually(hangTimeout, func() bool { return len(markedProcs(marker(t))) >= 3 }) {
				t.Fatalf("the child and its background process did not start")
			}
			if full {
				r := openReader(t, a.out) // never read
				fillOf := func() (n, room int) { room, n = pipeFill(t, r.f); return n, room }
				// Small writes fill the FIFO's page slots before its bytes:
				// full is when it holds much and stops growing.
				last := -1
				if !eventually(hangTimeout, func() bool {
					n, room := fillOf()
					stalled := n >= room/2 && n == last
					last = n
					return stalled
				}) {
					n, room := fillOf()
					t.Fatalf("output FIFO holds %d of %d bytes and still grows, want it full", n, room)
				}
			}
			begin := time.Now()
			a.signal(syscall.SIGTERM)
			code := a.wait(hangTimeout)
			if took := time.Since(begin); took > stopBound(time.Second) {
				t.Errorf("stop took %v, want at most -stop-timeout + 1s", took.Round(time.Millisecond))
			}
			if code != 128+int(syscall.SIGKILL) {
				t.Errorf("agent exited %d, want %d (the child ignored TERM)", code, 128+int(syscall.SIGKILL))
			}
			if left := markedProcs(marker(t)); len(left) > 0 {
				t.Errorf("processes of the terminal outlive the agent:%s", describe(left))
			}
		})
	}
}

func TestTTYFlags(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"ExecMode":    {"-mode", "exec", "-tty"},
		"BadSize":     {"-tty", "-tty-size", "80by24"},
		"ZeroColumns": {"-tty", "-tty-size", "0x24"},
	} {
		t.Run(name, func(t *testing.T) {
			checkLeaks(t, false)
			dir := filepath.Join(t.TempDir(), "fb")
			code, stderr := runAgent(t, nil, append(append([]string{"run", "-dir", dir}, args...), "--", "cat")...)
			if code != 125 {
				t.Errorf("exit code %d, want 125", code)
			}
			requireOneLine(t, "fifobridge run "+strings.Join(args, " "), stderr)
		})
	}
}
