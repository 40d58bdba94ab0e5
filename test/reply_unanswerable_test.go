//go:build linux

package test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReplyCannotBeOpened: a request whose reply FIFO the agent cannot open
// is answered nowhere but the agent's log (its id and reply name are the
// sender's secrets and never reach the shared output FIFO), and the sender
// learns of it at once: the agent removes the FIFO's name.
func TestReplyCannotBeOpened(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	requireBusybox(t)

	t.Run("descriptors exhausted", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{busybox, "cat"}})
		waitServing(t, a)
		// DIR/in is open before DIR/out is: only the serving line says
		// that the agent opened every descriptor it serves with.
		if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), "msg=serving") }) {
			t.Fatalf("the agent never said it serves:\n%s", a.stderr())
		}
		out := openReader(t, a.out)
		restore := exhaustDescriptors(t, a.pid)

		// A send that waited for an answer would end at its -timeout, with
		// 124: 125 and the reason say it learnt that none comes.
		res := runSend(t, a.dir, nil, "-timeout", "5s", "hello")
		restore()
		if res.code != 125 || !strings.Contains(res.stderr, "cannot answer on the reply FIFO") {
			t.Fatalf("send exited %d (stderr %q), want 125 saying the agent cannot answer", res.code, res.stderr)
		}
		out.expectQuiet(300 * time.Millisecond)
		requireNoReplies(t, a.dir)
		if res := runSend(t, a.dir, nil, "again"); res.code != 0 || string(res.stdout) != "again\n" {
			t.Fatalf("the next send exited %d printing %q (%s), want the answer", res.code, res.stdout, res.stderr)
		}
	})

	t.Run("permission denied", func(t *testing.T) {
		checkLeaks(t, false)
		agentUser := &syscall.Credential{Uid: 2500, Gid: 2500, Groups: []uint32{}}
		requireReachable(t, agentUser)
		dir := filepath.Join(sharedTemp(t), "fb")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 2500, 2500); err != nil {
			t.Fatal(err)
		}
		a := startAgent(t, agentConfig{dir: dir, cred: agentUser, flags: []string{"-mode", "exec", "-perm", "0666"},
			program: []string{busybox, "cat"}})
		waitServing(t, a)
		out := openReader(t, a.out)

		// A root sender's 0600 reply FIFO, which the agent's user may not open.
		name := "0123456789abcdef0123456789abcdef"
		path := filepath.Join(dir, "replies", name)
		if err := unix.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		reply := openReader(t, path)
		w := openWriter(t, a.in)
		w.writeLine(`{"id":"secret-id","reply":"` + name + `","stdin":"x"}`)
		w.close()
		if !eventually(hangTimeout, func() bool { _, err := os.Lstat(path); return os.IsNotExist(err) }) {
			t.Fatalf("the agent left the reply FIFO it could not open; its log:\n%s", a.stderr())
		}
		out.expectQuiet(300 * time.Millisecond)
		reply.expectQuiet(100 * time.Millisecond)
		if !strings.Contains(a.stderr(), "reply fifo cannot be opened") {
			t.Errorf("the agent's log does not say why:\n%s", a.stderr())
		}
		if strings.Contains(a.stderr(), name) {
			t.Errorf("the agent's log names the reply FIFO:\n%s", a.stderr())
		}
		if res := runSend(t, dir, nil, "again"); res.code != 0 || string(res.stdout) != "again\n" {
			t.Fatalf("the next send exited %d printing %q (%s), want the answer", res.code, res.stdout, res.stderr)
		}
	})
}

// exhaustDescriptors lowers the soft RLIMIT_NOFILE of process pid to its
// lowest free descriptor number, so that every open it makes fails with
// EMFILE, and returns what puts the old limit back.
func exhaustDescriptors(t *testing.T, pid int) (restore func()) {
	t.Helper()
	entries, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	used := map[int]bool{}
	for _, e := range entries {
		n, _ := strconv.Atoi(e.Name())
		used[n] = true
	}
	free := 0
	for used[free] {
		free++
	}
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Fatal(err)
	}
	low := unix.Rlimit{Cur: uint64(free), Max: old.Max}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &low, nil); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil); err != nil {
			t.Errorf("restore the agent's descriptor limit: %v", err)
		}
	}
}
