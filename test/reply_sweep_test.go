//go:build linux

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// sweepEnv shortens the agent's sweep of reply FIFOs left behind (a minute
// between sweeps, a minute of age) for tests; see cmd/fifobridge.
const sweepEnv = "FIFOBRIDGE_TEST_REPLY_SWEEP=200ms"

// holdsOpen reports whether process pid has path open.
func holdsOpen(pid int, path string) bool {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	for _, e := range ents {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// sweeps counts the sweeps the agent logged (-log-level debug).
func (a *agent) sweeps() int { return strings.Count(a.stderr(), `msg="reply sweep done"`) }

// waitSweeps waits until the agent has swept n more times.
func (a *agent) waitSweeps(n int) {
	a.t.Helper()
	want := a.sweeps() + n
	if !eventually(hangTimeout, func() bool { return a.sweeps() >= want }) {
		a.t.Fatalf("the agent did not sweep replies/ %d more times", n)
	}
}

// TestReplySweep (issue 18): a reply FIFO whose send was killed by SIGKILL
// is removed by the agent once no request names it, nobody reads it and it
// is older than the sweep's age; nothing else in replies/ is touched: not
// a FIFO that someone reads, nor a file, a directory or a link (nor what
// it points to), nor the FIFO of a request that is still queued.
func TestReplySweep(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	tmp := t.TempDir()
	running, proceed := filepath.Join(tmp, "running"), filepath.Join(tmp, "proceed")
	program := append(sh(t, `touch "$1"; while [ ! -e "$2" ]; do sleep 0.01; done; echo done`), running, proceed)
	a, w, r := startExec(t, agentConfig{flags: []string{"-max-concurrent", "1", "-log-level", "debug"},
		env: []string{sweepEnv}, program: program})
	defer w.close()
	defer r.close()
	replies := filepath.Join(a.dir, "replies")

	// A request of the test's own holds the only slot; a send's request
	// waits in the queue behind it, and the send is killed.
	w.writeLine(`{"id":"blocker"}`)
	waitFile(t, running)
	s := startSend(t, a.dir, nil, nil, "queued")
	var queued string
	if !eventually(hangTimeout, func() bool {
		names := replyNames(t, a.dir)
		if len(names) == 1 {
			queued = filepath.Join(replies, names[0])
		}
		return queued != "" && holdsOpen(a.pid, queued)
	}) {
		t.Fatalf("the agent never held a queued request's reply FIFO open (replies: %v)", replyNames(t, a.dir))
	}
	s.cmd.Process.Kill()
	s.wait(t, hangTimeout)

	// What else others may leave there.
	orphan, read := filepath.Join(replies, "orphan"), filepath.Join(replies, "read")
	for _, p := range []string{orphan, read} {
		if err := unix.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reader := openReader(t, read)
	defer reader.close()
	target := filepath.Join(tmp, "target")
	if err := unix.Mkfifo(target, 0o600); err != nil {
		t.Fatal(err)
	}
	keep := map[string]os.FileMode{
		filepath.Join(replies, "file"): 0,
		filepath.Join(replies, "dir"):  os.ModeDir,
		filepath.Join(replies, "link"): os.ModeSymlink,
		read:                           os.ModeNamedPipe,
		target:                         os.ModeNamedPipe,
	}
	if err := os.WriteFile(filepath.Join(replies, "file"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(replies, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(replies, "link")); err != nil {
		t.Fatal(err)
	}

	// The orphan goes once it is old enough; two sweeps later the queued
	// request's FIFO and everything else are still there.
	if !eventually(hangTimeout, func() bool { _, err := os.Lstat(orphan); return os.IsNotExist(err) }) {
		t.Fatalf("an unread FIFO nobody names was not removed; agent log:\n%s", a.stderr())
	}
	a.waitSweeps(2)
	requireKept(t, keep)
	if fi, err := os.Lstat(queued); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Fatalf("the reply FIFO of a queued request was removed: %v", err)
	}

	// Once the queued request has run (its reader is gone: it is
	// canceled), its FIFO is left behind, and goes too.
	if err := os.WriteFile(proceed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if f := readFrame(t, r); f.ID != "blocker" {
		t.Fatalf("frame %+v, want the blocker's", f)
	}
	if !eventually(hangTimeout, func() bool { _, err := os.Lstat(queued); return os.IsNotExist(err) }) {
		t.Fatalf("the killed send's reply FIFO was not removed after its request ended; agent log:\n%s", a.stderr())
	}
	a.waitSweeps(1)
	requireKept(t, keep)
}

// requireKept fails t unless every path in keep is still there, of its
// type.
func requireKept(t *testing.T, keep map[string]os.FileMode) {
	t.Helper()
	for p, typ := range keep {
		if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != typ {
			t.Errorf("%s: %v %v, want it kept (type %v)", p, fi, err, typ)
		}
	}
}

// TestReplySweepNonRootAgent: an agent that is not root serves senders of
// other users (their reply FIFOs are 0622: the agent could not write 0600
// ones), and removes what a killed one left, which it does not own.
func TestReplySweepNonRootAgent(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	requireBusybox(t)
	checkLeaks(t, false)
	agentUser := &syscall.Credential{Uid: 2500, Gid: 2500, Groups: []uint32{}}
	requireReachable(t, agentUser)
	requireReachable(t, member)
	base := sharedTemp(t)
	dir, work := filepath.Join(base, "fb"), filepath.Join(base, "work")
	for _, d := range []string{dir, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, 2500, 2500); err != nil {
			t.Fatal(err)
		}
	}
	running, proceed := filepath.Join(work, "running"), filepath.Join(work, "proceed")
	program := append(sh(t, `touch "$1"; while [ ! -e "$2" ]; do sleep 0.01; done; cat`), running, proceed)
	a := startAgent(t, agentConfig{dir: dir, cred: agentUser, env: []string{sweepEnv},
		flags: []string{"-mode", "exec", "-perm", "0666", "-log-level", "debug"}, program: program})
	waitServing(t, a)

	s := startSendAs(t, member, a.dir, "hello")
	waitFile(t, running)
	names := replyNames(t, a.dir)
	if len(names) != 1 {
		t.Fatalf("replies: %v, want the send's FIFO", names)
	}
	fifo := filepath.Join(a.dir, "replies", names[0])
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Perm() != 0o622 || fi.Sys().(*syscall.Stat_t).Uid != member.Uid {
		t.Fatalf("the reply FIFO of uid %d for an agent of uid %d: %v %v, want mode 0622 and its sender's", member.Uid, agentUser.Uid, fi, err)
	}
	s.cmd.Process.Kill()
	s.wait(t, hangTimeout)
	if !eventually(hangTimeout, func() bool { _, err := os.Lstat(fifo); return os.IsNotExist(err) }) {
		t.Fatalf("the agent of uid %d did not remove the FIFO uid %d left; agent log:\n%s", agentUser.Uid, member.Uid, a.stderr())
	}

	// And a send of another user gets its answer.
	if err := os.WriteFile(proceed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := runAs(t, member, []byte("hello\n"), "send", "-dir", a.dir)
	if res.code != 0 || res.stdout != "hello\n" {
		t.Fatalf("send as uid %d to an agent of uid %d exited %d printing %q; stderr:\n%s", member.Uid, agentUser.Uid, res.code, res.stdout, res.stderr)
	}
	requireNoReplies(t, a.dir)
}

// startSendAs starts "fifobridge send -dir DIR TEXT" as cred.
func startSendAs(t *testing.T, cred *syscall.Credential, dir, text string) *sendCmd {
	t.Helper()
	s := startSendCmd(t, dir, nil, nil, text)
	s.cmd.SysProcAttr = dieWithTest()
	s.cmd.SysProcAttr.Credential = cred
	s.start(t)
	return s
}
