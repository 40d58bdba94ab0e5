//go:build linux

package test

// Tests of -perm and of "Sharing the directory safely" where the agent is
// not root (issue 26): the input FIFOs are write-only to other users and
// the output FIFO read-only, so that a member of the directory's group
// can neither read another member's request lines nor learn the name of
// its reply FIFO, which is the only key to it; no forged frame reaches
// another member's send or ask.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/testlog"
)

func init() {
	helpers["forger"] = helperForger
}

// The users of the shared-group setup with an agent that is not root:
// the agent's user, two members who send and ask, and a third member who
// wants their answers. All are in dirGroup.
var (
	groupAgent = &syscall.Credential{Uid: 2002, Gid: dirGroup, Groups: []uint32{}}
	member2    = &syscall.Credential{Uid: 2003, Gid: 2003, Groups: []uint32{dirGroup}}
	intruder   = &syscall.Credential{Uid: 2004, Gid: 2004, Groups: []uint32{dirGroup}}
)

// forgeTries is how many sends, and how many asks, each member makes
// while the intruder is at work.
const forgeTries = 100

// TestPermSharedGroup is the README's shared-group setup with an agent
// that is not root: DIR is 2770, owned by the agent's user and the group,
// -perm is the default 0660. Two members send (exec mode) or ask (a
// conversation) a hundred times each while a third member tries to read
// DIR/in or DIR/ask and to answer their requests in the agent's place.
// It can open neither for reading, cannot list replies/, and nothing it
// writes reaches a member's output.
func TestPermSharedGroup(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	for _, cred := range []*syscall.Credential{groupAgent, member, member2, intruder} {
		requireReachable(t, cred)
	}
	cases := []struct {
		name, kind string
		flags      []string
		program    []string
		// request is the i-th request's argument and the output it must
		// give, exactly.
		request func(i int) (arg, want string)
	}{
		{"send", "in", []string{"-mode", "exec"}, []string{busybox, "cat"},
			func(i int) (string, string) { return fmt.Sprint("hello ", i), fmt.Sprint("hello ", i, "\n") }},
		{"ask", "ask", []string{"-prompt", pythonPrompt, "-stderr", "out"}, []string{"python3", "-i", "-q"},
			func(i int) (string, string) { return fmt.Sprintf("print(%d*7)", i), fmt.Sprint(i*7, "\n") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.kind == "ask" {
				requirePython(t)
			}
			checkLeaks(t, false)
			dir := groupDir(t, groupAgent.Uid, 0o770|os.ModeSetgid)
			startAgent(t, agentConfig{dir: dir, cred: groupAgent, flags: tc.flags, program: tc.program})
			first, want := tc.request(0)
			cmd := "send"
			if tc.kind == "ask" {
				cmd = "ask"
			}
			if res := runAs(t, member, nil, cmd, "-dir", dir, "-wait", "10s", first); res.code != 0 || res.stdout != want {
				t.Fatalf("%s as a member exited %d printing %q, want 0 and %q; stderr:\n%s", cmd, res.code, res.stdout, want, res.stderr)
			}
			modes := map[string]uint32{"in": 0o620, "out": 0o640}
			if tc.kind == "ask" {
				modes["ask"] = 0o620
			}
			requireFIFOModes(t, dir, modes, groupAgent.Uid, dirGroup)

			f := startForger(t, tc.kind, dir)
			var wg sync.WaitGroup
			var failed atomic.Bool
			for _, victim := range []*syscall.Credential{member, member2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < forgeTries && !failed.Load(); i++ {
						arg, want := tc.request(i)
						res := runAs(t, victim, nil, cmd, "-dir", dir, "-timeout", "10s", arg)
						if res.code != 0 || res.stdout != want {
							failed.Store(true)
							t.Errorf("%s %q as %s (try %d) exited %d printing %q, want 0 and %q; stderr:\n%s",
								cmd, arg, who(victim), i, res.code, res.stdout, want, res.stderr)
						}
					}
				}()
			}
			wg.Wait()
			report := f.stop(t)
			for _, want := range []string{"open: permission denied", "list: permission denied", "forged: 0"} {
				if !strings.Contains(report, want+"\n") {
					t.Errorf("the intruder's report does not say %q:\n%s", want, report)
				}
			}
			requireNoReplies(t, dir)
		})
	}
}

// groupDir makes the README's shared directory: owned by uid and
// dirGroup, with mode.
func groupDir(t *testing.T, uid uint32, mode os.FileMode) string {
	t.Helper()
	dir := filepath.Join(sharedTemp(t), "fb")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, int(uid), dirGroup); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// requireFIFOModes fails t unless each FIFO in dir has its permission bits
// and, when uid or gid is not -1, that owner and group.
func requireFIFOModes(t *testing.T, dir string, modes map[string]uint32, uid uint32, gid int) {
	t.Helper()
	for name, want := range modes {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, name), &st); err != nil {
			t.Errorf("DIR/%s: %v", name, err)
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFIFO || st.Mode&0o7777 != want {
			t.Errorf("DIR/%s has mode %#o (type %#o), want a FIFO of mode %#o", name, st.Mode&0o7777, st.Mode&unix.S_IFMT, want)
		}
		if gid >= 0 && (st.Uid != uid || int(st.Gid) != gid) {
			t.Errorf("DIR/%s belongs to %d:%d, want %d:%d", name, st.Uid, st.Gid, uid, gid)
		}
	}
}

// forger is the intruder at work (helperForger).
type forger struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   testlog.Buffer // written by exec's copy, read while it runs
}

// startForger starts helperForger KIND DIR as the intruder.
func startForger(t *testing.T, kind, dir string) *forger {
	t.Helper()
	f := &forger{cmd: exec.Command(sharedBin(t), kind, dir)}
	f.cmd.Env = append(agentEnv(t), helperEnv+"=forger")
	f.cmd.SysProcAttr = dieWithTest()
	f.cmd.SysProcAttr.Credential = intruder
	f.cmd.Stdout, f.cmd.Stderr = &f.out, &f.out
	var err error
	if f.stdin, err = f.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.stdin.Close(); f.cmd.Wait() })
	return f
}

// stop ends the forger and returns its report.
func (f *forger) stop(t *testing.T) string {
	t.Helper()
	f.stdin.Close()
	if err := f.cmd.Wait(); err != nil {
		t.Errorf("the forger: %v; output:\n%s", err, f.out.String())
	}
	return f.out.String()
}

// helperForger KIND DIR is a member of DIR's group after the answers of
// the others. It opens DIR/KIND (in or ask; replace-in: a FIFO of its own
// that it puts in place of DIR/in) for reading, and for every
// request line it reads there writes a forged answer, under the line's
// id, into the reply FIFO the line names; it also tries to list
// DIR/replies. It stops when its stdin closes, and prints "open: ",
// "list: " (ok or the error) and "forged: N", one per line.
func helperForger(args []string) int {
	kind, dir := args[0], args[1]
	flag := unix.O_RDONLY
	if kind == "replace-in" {
		// In a directory its group may write, put a FIFO of its own in
		// place of DIR/in, and hold it open.
		kind, flag = "in", unix.O_RDWR
		p := filepath.Join(dir, kind)
		err := os.Rename(p, p+".old")
		if err == nil {
			err = unix.Mkfifo(p, 0o600)
		}
		if err == nil {
			err = unix.Chmod(p, 0o622)
		}
		fmt.Println("replace:", okOrError(err))
	}
	fd, err := unix.Open(filepath.Join(dir, kind), flag|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	fmt.Println("open:", okOrError(err))
	_, lerr := os.ReadDir(filepath.Join(dir, "replies"))
	fmt.Println("list:", okOrError(lerr))
	var forged atomic.Int64
	var wg sync.WaitGroup
	if err == nil {
		f := os.NewFile(uintptr(fd), kind)
		wg.Add(1)
		go func() { defer wg.Done(); forge(f, kind, filepath.Join(dir, "replies"), &forged) }()
		defer func() { f.Close(); wg.Wait() }()
	}
	io.Copy(io.Discard, os.Stdin) // until the test closes it
	fmt.Println("forged:", forged.Load())
	return 0
}

// forge reads request lines from f and answers each, falsely, on the
// reply FIFO it names in replies, until f is closed.
func forge(f *os.File, kind, replies string, forged *atomic.Int64) {
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 2<<20)
	for lines.Scan() {
		var req struct{ ID, Reply string }
		if json.Unmarshal(lines.Bytes(), &req) != nil || req.Reply == "" || strings.Contains(req.Reply, "/") {
			continue
		}
		id, _ := json.Marshal(req.ID)
		frames := fmt.Sprintf(`{"id":%s,"type":"stdout","data":"FORGED\n"}`+"\n"+`{"id":%s,"type":"exit","code":0,"duration_ms":1}`+"\n", id, id)
		if kind == "ask" {
			frames = fmt.Sprintf(`{"id":%s,"type":"answer","data":"FORGED\n"}`+"\n"+`{"id":%s,"type":"end","ready":true,"duration_ms":1}`+"\n", id, id)
		}
		w, err := os.OpenFile(filepath.Join(replies, req.Reply), os.O_WRONLY|unix.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		if _, err := w.WriteString(frames); err == nil {
			forged.Add(1)
		}
		w.Close()
	}
}

// okOrError is "ok", or err's cause without the path it names.
func okOrError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err != nil {
		return err.Error()
	}
	return "ok"
}

// TestPermModes: -perm says who may use the FIFOs, not their mode. The
// classes it lets write may write the input FIFOs (in, ask), the classes it
// lets read may read the output FIFO (out), and nobody but the agent's
// user reads an input FIFO or writes an output one: at start, and when the
// agent makes a removed FIFO again.
func TestPermModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		perm    string // "" is the default, 0660
		in, out uint32
	}{
		{"", 0o620, 0o640},
		{"0666", 0o622, 0o644},
		{"0640", 0o600, 0o640},
		{"0602", 0o602, 0o600},
		{"0777", 0o622, 0o644},
	} {
		name := tc.perm
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			checkLeaks(t, false)
			flags := []string{"-prompt", `^> $`}
			if tc.perm != "" {
				flags = append(flags, "-perm", tc.perm)
			}
			a := startAgent(t, agentConfig{flags: flags, helper: "cat", program: helperProgram()})
			a.waitLog("msg=serving")
			modes := map[string]uint32{"in": tc.in, "out": tc.out, "ask": tc.in}
			requireFIFOModes(t, a.dir, modes, 0, -1)
			for name := range modes {
				if err := os.Remove(filepath.Join(a.dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			for name := range modes {
				// Logged once the FIFO made again has its mode.
				a.waitLog("fifo replaced", "path="+filepath.Join(a.dir, name), "created=true")
			}
			requireFIFOModes(t, a.dir, modes, 0, -1)
		})
	}
}

// TestPermCreateFalseWarns: an agent run with -create=false on input FIFOs
// that users other than its own may read says so at start, in one line
// naming them; FIFOs only its own user reads give no warning.
func TestPermCreateFalseWarns(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	const warning = "readable by other users"
	for _, tc := range []struct {
		name   string
		prompt bool
		fifos  map[string]uint32 // mode of each FIFO made before the agent starts
		owner  map[string]int    // uid of those not root's
		named  []string          // the FIFOs the warning names; none: no warning
	}{
		{"in 0660", false, map[string]uint32{"in": 0o660, "out": 0o640}, nil, []string{"in"}},
		{"in 0644", false, map[string]uint32{"in": 0o644, "out": 0o600}, nil, []string{"in"}},
		{"in of another user", false, map[string]uint32{"in": 0o620, "out": 0o640}, map[string]int{"in": int(member.Uid)}, []string{"in"}},
		{"in and ask 0666", true, map[string]uint32{"in": 0o666, "out": 0o644, "ask": 0o666}, nil, []string{"in", "ask"}},
		{"write-only input", true, map[string]uint32{"in": 0o622, "out": 0o644, "ask": 0o620}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, false)
			dir := t.TempDir()
			for name, mode := range tc.fifos {
				p := filepath.Join(dir, name)
				if err := unix.Mkfifo(p, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(p, tc.owner[name], 0); err != nil {
					t.Fatal(err)
				}
				if err := unix.Chmod(p, mode); err != nil {
					t.Fatal(err)
				}
			}
			flags := []string{"-create=false"}
			if tc.prompt {
				flags = append(flags, "-prompt", `^> $`)
			}
			a := startAgent(t, agentConfig{dir: dir, flags: flags, helper: "cat", program: helperProgram()})
			a.waitLog("msg=serving")
			var lines []string
			for _, l := range strings.Split(a.stderr(), "\n") {
				if strings.Contains(l, warning) {
					lines = append(lines, l)
				}
			}
			if len(tc.named) == 0 {
				if len(lines) > 0 {
					t.Fatalf("the agent warns of FIFOs only its user reads:\n%s", a.stderr())
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("the agent logged %d lines saying %q, want one:\n%s", len(lines), warning, a.stderr())
			}
			for _, name := range tc.named {
				if !strings.Contains(lines[0], filepath.Join(dir, name)) {
					t.Errorf("the warning does not name %s: %s", filepath.Join(dir, name), lines[0])
				}
			}
			if !slicesContains(tc.named, "ask") && strings.Contains(lines[0], filepath.Join(dir, "ask")) {
				t.Errorf("the warning names %s, which only the agent's user reads: %s", filepath.Join(dir, "ask"), lines[0])
			}
		})
	}
}

// TestPermReplacedInputWarns: an input FIFO replaced by one that users
// other than the agent's may read is served, and named in the log.
func TestPermReplacedInputWarns(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{helper: "cat", program: helperProgram()})
	a.waitLog("msg=serving")
	if err := os.Remove(a.in); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(a.in, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Chmod(a.in, 0o666); err != nil {
		t.Fatal(err)
	}
	a.waitLog("input fifo readable by other users", "path="+a.in, "mode=0666")
}

// TestPermSendRefusesReaders: in the shared-group setup with an agent that
// is not root, where a reply FIFO's name is the only key to it, send
// writes the name nowhere another user may read it. It refuses (125, one
// line, nothing written) when DIR/in may be read by the group (as an
// older agent made it), when a member put a FIFO of its own in its place
// (DIR is 2770: the group may replace entries), and when a member put a
// replies/ of its own in place of the agent's.
func TestPermSendRefusesReaders(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	for _, cred := range []*syscall.Credential{groupAgent, member, intruder} {
		requireReachable(t, cred)
	}
	for _, tc := range []struct {
		name string
		// spoil changes a serving agent's DIR; it may start a forger.
		spoil func(t *testing.T, dir string) *forger
		says  string
	}{
		{"in readable by the group", func(t *testing.T, dir string) *forger {
			if err := os.Chmod(filepath.Join(dir, "in"), 0o660); err != nil {
				t.Fatal(err)
			}
			return nil
		}, "may be read by users other than the agent's"},
		{"in replaced by a member", func(t *testing.T, dir string) *forger {
			return startForger(t, "replace-in", dir)
		}, "may be read by users other than the agent's"},
		{"replies replaced by a member", func(t *testing.T, dir string) *forger {
			p := filepath.Join(dir, "replies")
			if err := os.Rename(p, p+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(p, int(intruder.Uid), dirGroup); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o733|os.ModeSticky); err != nil {
				t.Fatal(err)
			}
			return nil
		}, "could learn the reply FIFO's name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, false)
			dir := groupDir(t, groupAgent.Uid, 0o770|os.ModeSetgid)
			a := startAgent(t, agentConfig{dir: dir, cred: groupAgent, flags: []string{"-mode", "exec"}, program: []string{busybox, "cat"}})
			if res := runAs(t, member, nil, "send", "-dir", dir, "-wait", "10s", "hello"); res.code != 0 || res.stdout != "hello\n" {
				t.Fatalf("send exited %d printing %q; stderr:\n%s", res.code, res.stdout, res.stderr)
			}
			f := tc.spoil(t, dir)
			if f != nil && !eventually(hangTimeout, func() bool { return strings.Contains(f.out.String(), "open: ") }) {
				t.Fatalf("the forger did not start: %s", f.out.String())
			}
			for i := 0; i < 5; i++ {
				res := runAs(t, member, nil, "send", "-dir", dir, "-timeout", "5s", "hello")
				if res.code != 125 || res.stdout != "" || !strings.Contains(res.stderr, tc.says) {
					t.Fatalf("send (try %d) exited %d printing %q, want 125, nothing, and a line saying %q; stderr:\n%s", i, res.code, res.stdout, tc.says, res.stderr)
				}
				requireOneLine(t, "send", res.stderr)
			}
			if f != nil {
				if report := f.stop(t); !strings.Contains(report, "forged: 0\n") {
					t.Errorf("the forger's report:\n%s", report)
				}
			}
			st := a.waitExecStatus("the first request counted", func(st status) bool { return st.Requests.Completed >= 1 })
			if st.Requests.Accepted != 1 || st.Requests.Rejected != 0 {
				t.Errorf("requests %+v, want only the first accepted: a refused send wrote its line", st.Requests)
			}
		})
	}
}

// TestPermReplyNamesUnlogged: a reply FIFO's name reaches neither the
// agent's log (at debug level, with the sweep at work) nor the output
// FIFO, whatever is wrong with it: a request whose reply FIFO has no
// reader is refused in the log only, one that names no usable reply FIFO
// (missing, a regular file, a FIFO with two names) gets an error frame on
// the output FIFO that does not name it, and so does an ask.
func TestPermReplyNamesUnlogged(t *testing.T) {
	t.Parallel()
	const secret = "secret-5f0c9a"
	t.Run("send", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{env: []string{sweepEnv}, flags: []string{"-mode", "exec", "-log-level", "debug"},
			program: []string{busybox, "cat"}})
		waitServing(t, a)
		replies := filepath.Join(a.dir, "replies")
		for _, name := range []string{"noreader", "linked"} {
			if err := unix.Mkfifo(filepath.Join(replies, secret+name), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		linked := openReader(t, filepath.Join(replies, secret+"linked"))
		defer linked.close()
		if err := os.Link(filepath.Join(replies, secret+"linked"), filepath.Join(replies, secret+"linked2")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(replies, secret+"file"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		out := openReader(t, a.out)
		defer out.close()
		sweeps := a.sweeps()
		w := openWriter(t, a.in)
		for i, name := range []string{"noreader", "missing", "file", "linked"} {
			w.writeLine(fmt.Sprintf(`{"id":"r%d","reply":"%s%s","stdin":"x"}`, i, secret, name))
		}
		w.writeLine(`{"id":"last","stdin":"done"}`)
		w.close()
		var frames []string
		for {
			line := out.readLine()
			frames = append(frames, line)
			if strings.Contains(line, `"id":"last","type":"exit"`) {
				break
			}
		}
		errorFrames := 0
		for _, f := range frames {
			if strings.Contains(f, `"type":"error"`) {
				errorFrames++
			}
			if strings.Contains(f, secret) {
				t.Errorf("a frame on the output FIFO names a reply FIFO: %s", f)
			}
		}
		if errorFrames != 3 {
			t.Errorf("%d error frames on the output FIFO, want 3 (missing, file, linked):\n%s", errorFrames, strings.Join(frames, "\n"))
		}
		if !eventually(hangTimeout, func() bool { return a.sweeps() >= sweeps+2 }) {
			t.Fatalf("the reply sweep did not run twice:\n%s", a.stderr())
		}
		a.waitLog("request not answered", "id=r0")
		if strings.Contains(a.stderr(), secret) {
			t.Errorf("the agent's log names a reply FIFO:\n%s", a.stderr())
		}
	})
	t.Run("ask", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-prompt", `^> $`, "-log-level", "debug"}, helper: "cat", program: helperProgram()})
		a.waitLog("msg=serving")
		w := openWriter(t, filepath.Join(a.dir, "ask"))
		w.writeLine(`{"id":"a1","reply":"` + secret + `missing","input":"x"}`)
		w.close()
		a.waitLog("ask not answered", "id=a1")
		if strings.Contains(a.stderr(), secret) {
			t.Errorf("the agent's log names a reply FIFO:\n%s", a.stderr())
		}
	})
}
