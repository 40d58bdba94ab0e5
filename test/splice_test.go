//go:build linux

package test

// Tests of issue 26's holes 2 and 4, in the Kubernetes example's setup: a
// root agent, DIR root:3000 2750, members of group 3000 who send. A
// member who may only write DIR/in (0620) attacks another's send: it
// puts bytes between the pieces of the victim's large request line (hole
// 2), or takes every slot with requests whose reply FIFOs it holds open
// and never reads (hole 4).

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	helpers["splicer"] = helperSplicer
	helpers["staller"] = helperStaller
}

// secret marks the victim's stdin: the attacker must never see it.
const secret = "VICTIM-SECRET-"

// podDir makes DIR as the Kubernetes example has it: root:3000, 2750.
func podDir(t *testing.T) string {
	t.Helper()
	return groupDir(t, 0, 0o750|os.ModeSetgid)
}

// attacker is a helper of the test binary run as the intruder, driven by
// lines on its stdin and reporting on its stdout.
type attacker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startAttacker(t *testing.T, helper string, args ...string) *attacker {
	t.Helper()
	a := &attacker{cmd: exec.Command(sharedBin(t), args...)}
	a.cmd.Env = append(agentEnv(t), helperEnv+"="+helper)
	a.cmd.SysProcAttr = dieWithTest()
	a.cmd.SysProcAttr.Credential = intruder
	a.cmd.Stderr = os.Stderr
	var err error
	if a.stdin, err = a.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.out = bufio.NewReader(stdout)
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.stdin.Close(); a.cmd.Process.Kill(); a.cmd.Wait() })
	return a
}

// expect waits for the attacker's next line, which must be want.
func (a *attacker) expect(t *testing.T, want string) {
	t.Helper()
	if line := a.line(t); line != want {
		t.Fatalf("the attacker said %q, want %q", line, want)
	}
}

// line waits for the attacker's next line.
func (a *attacker) line(t *testing.T) string {
	t.Helper()
	line, err := a.out.ReadString('\n')
	if err != nil {
		t.Fatalf("the attacker said %q and then: %v", line, err)
	}
	return strings.TrimSuffix(line, "\n")
}

// tell sends the attacker a command.
func (a *attacker) tell(t *testing.T, cmd string) {
	t.Helper()
	if _, err := io.WriteString(a.stdin, cmd+"\n"); err != nil {
		t.Fatal(err)
	}
}

// report ends the attacker and returns the rest of what it said.
func (a *attacker) report(t *testing.T) string {
	t.Helper()
	a.stdin.Close()
	rest, _ := io.ReadAll(a.out)
	if err := a.cmd.Wait(); err != nil {
		t.Errorf("the attacker: %v; it said:\n%s", err, rest)
	}
	return string(rest)
}

// TestExecSpliceAttack (issue 26, hole 2): while the agent does not read
// DIR/in (every slot and the queue are busy), the intruder fills it and
// then writes pieces of its own that land between the pieces of a
// member's 100 KB send: a duplicate "reply" (encoding/json keeps the
// last, which ran the victim's request into the attacker's reply FIFO),
// or a newline that splits the victim's line (which ran the victim's
// request on its first half plus the attacker's text, and framed the
// rest as the attacker's requests). Now the victim gets its own output
// or 125 at once, never an answer it did not cause, and the attacker's
// reply FIFO never gets a byte of the victim's stdin.
func TestExecSpliceAttack(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	for _, cred := range []*syscall.Credential{member, intruder} {
		requireReachable(t, cred)
	}
	for _, variant := range []string{"reply", "split"} {
		t.Run(variant, func(t *testing.T) {
			checkLeaks(t, false)
			var spliced int
			for round := range 3 {
				if spliceRound(t, variant) {
					spliced++
				}
				if t.Failed() {
					t.Fatalf("round %d", round)
				}
			}
			t.Logf("the victim's line was spliced in %d of 3 rounds", spliced)
		})
	}
}

// spliceRound is one attack; it reports whether the victim's line was
// refused (the attacker's bytes landed inside it).
func spliceRound(t *testing.T, variant string) bool {
	t.Helper()
	dir := podDir(t)
	release := filepath.Join(sharedTemp(t), "release")
	a := startAgent(t, agentConfig{dir: dir,
		flags: []string{"-mode", "exec", "-perm", "0660", "-max-concurrent", "1", "-allow-args", "-stop-timeout", "2s"},
		// A request with args "block FILE" waits until FILE exists:
		// what keeps the agent from reading DIR/in.
		program: []string{busybox, "sh", "-c",
			`if [ "$1" = block ]; then while [ ! -e "$2" ]; do sleep 0.01; done; exit 0; fi; exec cat`, "sh"},
	})
	w := openWriter(t, a.in)
	block := fmt.Sprintf(`{"args":["block",%q]}`, release)
	w.writeLine(block)
	a.waitStatus("the first blocker running", func(s status) bool { return s.Requests.Active == 1 })
	// One in the queue, one held by the request loop: it reads no more.
	w.writeLine(block + "\n" + block)

	att := startAttacker(t, "splicer", dir, variant, secret)
	filled := atoi(strings.TrimPrefix(att.line(t), "filled "))
	stdin := []byte(strings.Repeat(secret+"0123456789abcdefghijklmnopqrstuvwxyz\n", 100_000/51))
	victim := startSendCmd(t, dir, nil, stdin, "-timeout", "8s")
	victim.cmd.SysProcAttr = dieWithTest()
	victim.cmd.SysProcAttr.Credential = member
	victim.start(t)
	in, err := os.OpenFile(a.in, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if !eventually(hangTimeout, func() bool { return locked(t, in, victim) }) {
		t.Fatal("send never took the input FIFO's lock")
	}
	att.tell(t, "go")
	pace(t, in, filled, victim)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := victim.wait(t, hangTimeout)
	att.tell(t, "stop")
	// Every line before it has been read once this one is answered. The
	// attacker's lines ahead of it are up to maxSplices requests, served
	// one at a time, each a process: a busy machine may take more than
	// seconds for them.
	honest := startSend(t, dir, nil, nil, "-timeout", "60s", "honest").wait(t, time.Minute+hangTimeout)
	if honest.code != 0 || string(honest.stdout) != "honest\n" {
		t.Errorf("a send after the attack exited %d printing %q; stderr:\n%s", honest.code, honest.stdout, honest.stderr)
	}
	a.waitStatus("no request running", func(s status) bool { return s.Requests.Active == 0 })
	report := att.report(t)
	switch {
	case res.code == 0 && bytes.Equal(res.stdout, stdin):
	case res.code == 125 && len(res.stdout) == 0:
	default:
		t.Errorf("the victim's send exited %d printing %d bytes (%.80q...), want its own %d bytes and 0, or 125; stderr:\n%s",
			res.code, len(res.stdout), res.stdout, len(stdin), res.stderr)
	}
	// A line the attacker makes around a later piece of the victim's is
	// taken unsealed, as the protocol takes long lines written by hand
	// (protocol/seal.go): with "split" it may read that piece. It never
	// gets the first piece, with the id and reply, nor makes the victim
	// print anything.
	if variant != "split" && !strings.Contains(report, "secret: no\n") {
		t.Errorf("the attacker got the victim's stdin:\n%s", report)
	}
	w.close()
	if code := a.stop(); code != 0 {
		t.Errorf("agent exited %d", code)
	}
	return res.code == 125
}

// locked reports whether send holds the flock on the input FIFO, in: it
// is writing its request (a large one takes the lock first, and lets it
// go once written).
func locked(t *testing.T, in *os.File, send *sendCmd) bool {
	t.Helper()
	select {
	case <-send.done:
		return false
	default:
	}
	err := unix.Flock(int(in.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		unix.Flock(int(in.Fd()), unix.LOCK_UN)
	}
	return errors.Is(err, unix.EWOULDBLOCK)
}

// pace reads the input FIFO, in, in the agent's place, a page at a time,
// at most the filled bytes the attacker put there first (blank lines), so
// that every write waiting for room gets one page at a time, as with an
// agent that reads slowly: the victim's pieces and the attacker's, in
// turn. It stops once the victim has written its request, or nobody
// writes any more.
func pace(t *testing.T, in *os.File, filled int, victim *sendCmd) {
	t.Helper()
	page := make([]byte, 4096)
	for read := 0; read+len(page) <= filled && locked(t, in, victim); {
		before, err := unix.IoctlGetInt(int(in.Fd()), unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		n, err := unix.Read(int(in.Fd()), page)
		if err != nil || n != len(page) || len(bytes.Trim(page, "\n")) > 0 {
			t.Fatalf("read a page of the attacker's blank lines: %d bytes, %v", n, err)
		}
		read += n
		if !eventually(time.Second, func() bool {
			now, err := unix.IoctlGetInt(int(in.Fd()), unix.TIOCINQ)
			return err != nil || now > before-n
		}) {
			return // nobody writes any more
		}
	}
}

// helperSplicer DIR VARIANT SECRET is the intruder of TestExecSpliceAttack.
// It makes replies/att and reads it; fills DIR/in with blank lines and
// says "filled N" (bytes); on "go" writes its piece (VARIANT: "reply" or
// "split", padded to a page) again and again, each with one write(2),
// without the lock, until "stop" (at most maxSplices); when its stdin
// closes it says whether anything that came to replies/att held SECRET
// ("secret: yes" or "secret: no").
func helperSplicer(args []string) int {
	dir, variant, mark := args[0], args[1], args[2]
	att := filepath.Join(dir, "replies", "att")
	if err := unix.Mkfifo(att, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "splicer:", err)
		return 1
	}
	r, err := os.OpenFile(att, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		// A write end of its own: its reads wait for frames, never EOF.
		_, err = os.OpenFile(att, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "splicer:", err)
		return 1
	}
	var got bytes.Buffer
	var gotMu sync.Mutex
	go func() { // until the process ends
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			gotMu.Lock()
			got.Write(buf[:n])
			gotMu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	fd, err := unix.Open(filepath.Join(dir, "in"), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "splicer:", err)
		return 1
	}
	filled := 0
	for blank := bytes.Repeat([]byte("\n"), 4096); ; filled += len(blank) {
		if _, err := unix.Write(fd, blank); err != nil {
			break // EAGAIN: full
		}
	}
	fmt.Println("filled", filled)
	in := bufio.NewScanner(os.Stdin)
	in.Scan() // "go"
	var stop atomic.Bool
	var next atomic.Int64
	var writers sync.WaitGroup
	unix.SetNonblock(fd, false) // each write waits for room, as the victim's do
	// Several writers, each blocked in write(2) while the FIFO is full:
	// the kernel wakes them with the victim's, and one of them gets in
	// between two of the victim's pieces.
	for range splicers {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := next.Add(1); i <= maxSplices && !stop.Load(); i = next.Add(1) {
				piece := `","reply":"att","x":"`
				if variant == "split" {
					// Ends the victim's stdin string with a text of its
					// own and the victim's line, and begins a line of its
					// own whose stdin is the rest of the victim's.
					piece = fmt.Sprintf(`\nINJECTED"}`+"\n"+`{"id":"q%d","reply":"att","stdin":"`, i)
				}
				// A page, all in the string the piece opens: it takes
				// a page of the pipe of its own, as the victim's do.
				unix.Write(fd, append([]byte(piece), bytes.Repeat([]byte("z"), 4096-len(piece))...))
			}
		}()
	}
	in.Scan() // "stop"
	stop.Store(true)
	writers.Wait()
	for in.Scan() { // until stdin closes
	}
	gotMu.Lock()
	defer gotMu.Unlock()
	fmt.Printf("att got %d bytes\n", got.Len())
	if bytes.Contains(got.Bytes(), []byte(mark)) {
		fmt.Printf("secret: yes\n%.300s\n", got.Bytes())
	} else {
		fmt.Println("secret: no")
	}
	return 0
}

// maxSplices bounds the splicer's pieces: enough to land inside the
// victim's line, not so many that the lines they make take long to serve;
// splicers write them at once.
const maxSplices, splicers = 100, 4

// TestExecStallByUnreadReplies (issue 26, hole 4): the intruder sends
// requests whose child writes more than the pipes hold, each naming a
// reply FIFO it holds open and never reads, enough to take every slot,
// and the queue too. No request has a time limit. A member's send is
// still served, within -stop-timeout (the patience) per round of stalled
// requests ahead of it, plus a margin; each stalled request is given up
// once, in the log.
func TestExecStallByUnreadReplies(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	for _, cred := range []*syscall.Credential{member, intruder} {
		requireReachable(t, cred)
	}
	const stopTimeout, slots = 2 * time.Second, 2
	for _, rounds := range []int{1, 2} { // the slots; the slots and the queue
		t.Run(fmt.Sprintf("%d rounds", rounds), func(t *testing.T) {
			checkLeaks(t, false)
			dir := podDir(t)
			a := startAgent(t, agentConfig{dir: dir, program: []string{busybox, "cat"},
				flags: []string{"-mode", "exec", "-perm", "0660", "-max-concurrent", strconv.Itoa(slots), "-stop-timeout", stopTimeout.String()}})
			waitServing(t, a)
			n := rounds * slots
			att := startAttacker(t, "staller", dir, strconv.Itoa(n))
			att.expect(t, "sent")
			a.waitStatus("the stalled requests running", func(s status) bool { return s.Requests.Active == slots })
			begin := time.Now()
			res := runAs(t, member, nil, "send", "-dir", dir, "-timeout", "8s", "honest")
			took := time.Since(begin)
			if res.code != 0 || res.stdout != "honest\n" {
				t.Fatalf("send exited %d printing %q after %v; stderr:\n%s", res.code, res.stdout, took, res.stderr)
			}
			if limit := time.Duration(rounds)*stopTimeout + 3*time.Second; took > limit {
				t.Errorf("send was served after %v, want at most %v", took, limit)
			}
			t.Logf("served after %v", took)
			a.waitStatus("every stalled request given up", func(s status) bool { return s.Requests.Completed == n+1 })
			if got := strings.Count(a.stderr(), "giving up on a reply fifo whose reader takes nothing"); got != n {
				t.Errorf("%d stalled requests given up in the log, want %d:\n%s", got, n, a.stderr())
			}
			att.report(t)
			if code := a.stop(); code != 0 {
				t.Errorf("agent exited %d", code)
			}
		})
	}
}

// helperStaller DIR N sends N requests of 300 KB, sealed as send seals
// them, each naming a reply FIFO of its own that it holds open and never
// reads; it says "sent", and holds them until its stdin closes.
func helperStaller(args []string) int {
	dir, n := args[0], atoi(args[1])
	in, err := os.OpenFile(filepath.Join(dir, "in"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "staller:", err)
		return 1
	}
	var held []*os.File
	for i := range n {
		name := fmt.Sprintf("stall%d", i)
		path := filepath.Join(dir, "replies", name)
		if err := unix.Mkfifo(path, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "staller:", err)
			return 1
		}
		r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "staller:", err)
			return 1
		}
		held = append(held, r)
		obj := fmt.Sprintf(`{"id":"s%d","reply":%q,"stdin":%q}`, i, name, strings.Repeat("A", 300_000))
		if _, err := in.Write(sealLine([]byte(obj))); err != nil {
			fmt.Fprintln(os.Stderr, "staller:", err)
			return 1
		}
	}
	fmt.Println("sent")
	io.Copy(io.Discard, os.Stdin)
	for _, r := range held {
		r.Close()
	}
	return 0
}

// sealLine is obj, a JSON object, as a line over 4094 bytes must be
// written (docs/exec.md): a newline, the seal {"size":N,"sha256":"HEX"
// (N the line's length without its newline, HEX the SHA-256 of all that
// follows the seal), the rest of obj, spaces up to whole pieces of 4096
// bytes, and a newline. Written here from the documentation, not from
// the code that checks it.
func sealLine(obj []byte) []byte {
	rest := append([]byte{','}, obj[1:]...)
	for d := 1; ; d++ {
		n := len(`{"size":`) + d + len(`,"sha256":"`) + 64 + 1 + len(rest)
		pad := (4096 - (n+2)%4096) % 4096
		if len(strconv.Itoa(n+pad)) != d {
			continue
		}
		body := append(append([]byte(nil), rest...), bytes.Repeat([]byte(" "), pad)...)
		sum := sha256.Sum256(body)
		return fmt.Appendf(nil, "\n{\"size\":%d,\"sha256\":\"%s\"%s\n", n+pad, hex.EncodeToString(sum[:]), body)
	}
}
