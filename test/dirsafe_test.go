//go:build linux

package test

// Tests of "Sharing the directory safely" (issue 9): the agent runs as
// root, the attacker as uid 65534 (nobody), a user who can write the FIFO
// directory, or only use it.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/fifobridge/fifobridge/internal/testgate"
	"golang.org/x/sys/unix"
)

// nobody is the attacker's uid and gid.
const nobody = 65534

func init() {
	helpers["swaprace"] = helperSwapRace
	helpers["probe"] = helperProbe
}

// requireRoot skips t (fails it when FIFOBRIDGE_REQUIRE_PRIVILEGED=1) unless
// this process is root and so can act as another user.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	testgate.Skip(t, "%s", "tests of other users need root")
}

// sharedTemp returns a new directory that every user can reach (the test's
// temporary directories are private to root otherwise).
func sharedTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p := dir; p != filepath.Clean(os.TempDir()) && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// sharedBin returns a copy of the test binary that every user can run.
func sharedBin(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(selfBin)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(sharedTemp(t), "test.bin")
	if err := writeUnforked(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// asNobody returns the helper of bin as a command of the attacker.
func asNobody(t *testing.T, bin, helper string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(agentEnv(t), helperEnv+"="+helper)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	return cmd
}

// probeAsNobody runs the probe helper as the attacker and returns its
// answer: "ok" or the error.
func probeAsNobody(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := asNobody(t, bin, "probe", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe %q: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// helperProbe ARGS: "readdir DIR" lists DIR, "write FIFO" opens FIFO for
// writing without waiting, "mkfifo PATH" makes a FIFO there (and removes
// it again); it prints "ok" or the error, and exits 0.
func helperProbe(args []string) int {
	var err error
	switch args[0] {
	case "readdir":
		_, err = os.ReadDir(args[1])
	case "mkfifo":
		if err = unix.Mkfifo(args[1], 0o600); err == nil {
			err = os.Remove(args[1])
		}
	case "write":
		var fd int
		fd, err = unix.Open(args[1], unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		fmt.Println(err)
	} else {
		fmt.Println("ok")
	}
	return 0
}

// helperSwapRace DIR TARGET ROUNDS is the owner of DIR racing the agent:
// it removes DIR/in and, as soon as inotify reports the agent's new one,
// renames a symlink to TARGET over it; ROUNDS times.
func helperSwapRace(args []string) int {
	dir, target, rounds := args[0], args[1], atoi(args[2])
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err == nil {
		_, err = unix.InotifyAddWatch(fd, dir, unix.IN_CREATE)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "inotify:", err)
		return 1
	}
	in, link := filepath.Join(dir, "in"), filepath.Join(dir, ".link")
	buf := make([]byte, 64<<10)
	for i := 0; i < rounds; i++ {
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			fmt.Fprintln(os.Stderr, "symlink:", err)
			return 1
		}
		if err := os.Remove(in); err != nil {
			fmt.Fprintln(os.Stderr, "remove:", err)
			return 1
		}
		for created := false; !created; {
			n, err := unix.Read(fd, buf)
			if err != nil && err != unix.EINTR {
				fmt.Fprintln(os.Stderr, "read inotify:", err)
				return 1
			}
			created = createdNamed(buf[:max(n, 0)], "in")
		}
		unix.Rename(link, in)
	}
	return 0
}

// createdNamed reports whether the inotify events in b include one for
// name.
func createdNamed(b []byte, name string) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		made := b[unix.SizeofInotifyEvent : unix.SizeofInotifyEvent+int(ev.Len)]
		if string(bytes.TrimRight(made, "\x00")) == name {
			return true
		}
		b = b[unix.SizeofInotifyEvent+int(ev.Len):]
	}
	return false
}

// fileID is what must not change about a file outside DIR.
func fileID(t *testing.T, path string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("mode %o uid %d gid %d", st.Mode, st.Uid, st.Gid)
}

// TestFIFORemakeRace: the owner of DIR removes in, and as soon as the agent
// makes it again, renames a symlink to a root-owned 0600 file over it,
// hoping the agent sets its mode through the link. 50 rounds (5 with
// -short), spread over 5 agents at once (each remake waits a second).
func TestFIFORemakeRace(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	checkLeaks(t, false)
	agents, rounds := 5, soak("", 1, 10)
	bin := sharedBin(t)
	target := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(target, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	targetDir := filepath.Dir(target)
	before, beforeDir := fileID(t, target), fileID(t, targetDir)

	var racers []*exec.Cmd
	for i := 0; i < agents; i++ {
		dir := filepath.Join(sharedTemp(t), "fb")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		a := startAgent(t, agentConfig{dir: dir, helper: "cat", program: helperProgram(), flags: []string{"-perm", "0666"}})
		a.waitStatus("running", func(st status) bool { return st.State == "running" })
		racer := asNobody(t, bin, "swaprace", dir, target, fmt.Sprint(rounds))
		racer.Stderr = os.Stderr
		if err := racer.Start(); err != nil {
			t.Fatal(err)
		}
		racers = append(racers, racer)
	}
	for _, r := range racers {
		done := make(chan error, 1)
		go func() { done <- r.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("racer: %v", err)
			}
		case <-time.After(60 * time.Second):
			r.Process.Kill()
			<-done
			t.Errorf("racer %d did not finish its %d rounds within 60s", r.Process.Pid, rounds)
		}
	}
	if after := fileID(t, target); after != before {
		t.Errorf("the file outside DIR changed: %s, was %s", after, before)
	}
	if after := fileID(t, targetDir); after != beforeDir {
		t.Errorf("the directory outside DIR changed: %s, was %s", after, beforeDir)
	}
}

// TestRepliesSymlinkAtStart: a symlink planted at DIR/replies before an
// exec-mode agent starts is refused (125, one clear line), and its target
// is not touched; so is a replies/ that another user made.
func TestRepliesSymlinkAtStart(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	checkLeaks(t, false)
	target := t.TempDir()
	if err := os.Chmod(target, 0o755); err != nil {
		t.Fatal(err)
	}
	before := fileID(t, target)
	dir := filepath.Join(t.TempDir(), "fb")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777) // anyone could have planted it
	if err := os.Symlink(target, filepath.Join(dir, "replies")); err != nil {
		t.Fatal(err)
	}
	code, stderr := runAgent(t, nil, "run", "-dir", dir, "-mode", "exec", "--", "true")
	if code != 125 || !strings.Contains(stderr, "replies") || !strings.Contains(stderr, "symbolic link") {
		t.Errorf("agent exited %d, want 125 naming replies and the link:\n%s", code, stderr)
	}
	requireOneLine(t, "the refusing agent", stderr)
	if after := fileID(t, target); after != before {
		t.Errorf("the link's target changed: %s, was %s", after, before)
	}

	// A real directory, but someone else's: they could list it.
	os.Remove(filepath.Join(dir, "replies"))
	if err := os.Mkdir(filepath.Join(dir, "replies"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(dir, "replies"), nobody, nobody)
	code, stderr = runAgent(t, nil, "run", "-dir", dir, "-mode", "exec", "--", "true")
	if code != 125 || !strings.Contains(stderr, "uid 65534") {
		t.Errorf("agent exited %d, want 125 naming the owner:\n%s", code, stderr)
	}
}

// TestRepliesSwappedWhileServing: while an exec-mode agent serves, a writer
// of DIR swaps replies/ for a symlink to a directory holding a FIFO with a
// reader, and names that FIFO as a request's reply: the request is
// rejected on the output FIFO and not one byte reaches the FIFO outside.
func TestRepliesSwappedWhileServing(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	checkLeaks(t, false)
	dir := filepath.Join(t.TempDir(), "fb")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(dir, nobody, nobody) // a directory its owner can change
	a, w, r := startExec(t, agentConfig{dir: dir, helper: "cat", program: helperProgram()})
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := unix.Mkfifo(victim, 0o600); err != nil {
		t.Fatal(err)
	}
	vr := openReader(t, victim)
	defer vr.close()
	replies := filepath.Join(a.dir, "replies")
	if err := os.Rename(replies, replies+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, replies); err != nil {
		t.Fatal(err)
	}
	w.writeLine(`{"id":"hijack","reply":"victim","stdin":"x"}`)
	resp := nextResponse(t, r)
	resp.requireError(t)
	if b, err := vr.readSome(4096, time.Now().Add(200*time.Millisecond)); len(b) > 0 {
		t.Errorf("a frame was written outside replies/: %q (%v)", b, err)
	}
}

// TestRepliesNotListable: replies/ is 1733, so another user cannot list it
// and learn a reply FIFO's name.
func TestRepliesNotListable(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	checkLeaks(t, false)
	bin := sharedBin(t)
	dir := filepath.Join(sharedTemp(t), "fb")
	a, w, _ := startExec(t, agentConfig{dir: dir, helper: "cat", program: helperProgram()})
	defer w.close()
	replies := filepath.Join(a.dir, "replies")
	fi, err := os.Stat(replies)
	if err != nil {
		t.Fatal(err)
	}
	if want := os.ModeDir | os.ModeSticky | 0o733; fi.Mode() != want {
		t.Errorf("replies/ has mode %v, want %v", fi.Mode(), want)
	}
	if got := probeAsNobody(t, bin, "readdir", replies); !strings.Contains(got, "permission denied") {
		t.Errorf("uid %d listing replies/: %s, want permission denied", nobody, got)
	}
}

// TestUserCannotWriteIn: under the README's settings for -user (DIR 2750 in
// a group the child does not have, -perm 0660) the child cannot open DIR/in
// for writing, and the agent does not warn.
func TestUserCannotWriteIn(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	checkLeaks(t, false)
	const group = 2000 // the clients' group (a pod's fsGroup)
	bin := sharedBin(t)
	dir := filepath.Join(sharedTemp(t), "fb")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 0, group); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o750|os.ModeSetgid)
	in := filepath.Join(dir, "in")
	a, w, r := startExec(t, agentConfig{dir: dir, helper: "probe",
		program: []string{bin, "write", in},
		flags:   []string{"-user", fmt.Sprintf("%d:%d", nobody, nobody), "-perm", "0660"}})
	defer w.close()
	defer r.close()
	w.writeLine(`{"id":"probe"}`)
	resp := nextResponse(t, r)
	if got := string(resp.stdout); resp.exit == nil || !strings.Contains(got, "permission denied") {
		t.Errorf("the child opening %s for writing: %q, want permission denied:%s", in, got, resp)
	}
	var st unix.Stat_t
	if err := unix.Stat(in, &st); err != nil || st.Gid != group || st.Mode&0o777 != 0o620 {
		t.Errorf("in: gid %d mode %o (%v), want group %d and 0620", st.Gid, st.Mode&0o777, err, group)
	}
	if strings.Contains(a.stderr(), "-user:") {
		t.Errorf("the agent warned under the recommended settings:\n%s", a.stderr())
	}
}

// TestUserAccessWarning: with -user and -perm 0666 the child could write
// DIR/in itself; the agent says so at start.
func TestUserAccessWarning(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{helper: "cat", program: []string{sharedBin(t)},
		flags: []string{"-user", fmt.Sprintf("%d:%d", nobody, nobody), "-perm", "0666"}})
	a.waitStatus("running", func(st status) bool { return st.State == "running" })
	if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), "can write the input FIFO") }) {
		t.Errorf("no warning that the child can write the input FIFO:\n%s", a.stderr())
	}
}

// TestAgentLock: an agent holds DIR/lock; a second agent for the same
// directory refuses to start (125, one clear line) and the first is not
// disturbed.
func TestAgentLock(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{helper: "cat", program: helperProgram()})
	a.waitStatus("running", func(st status) bool { return st.State == "running" })
	fi, err := os.Lstat(filepath.Join(a.dir, "lock"))
	// Readable by whoever the default -perm 0660 lets use the FIFOs.
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o640 {
		t.Fatalf("DIR/lock: %v %v, want a 0640 regular file", fi, err)
	}
	code, stderr := runAgent(t, nil, "run", "-dir", a.dir, "--", "true")
	if code != 125 || !strings.Contains(stderr, "another agent") {
		t.Errorf("second agent exited %d, want 125 saying another agent serves the directory:\n%s", code, stderr)
	}
	requireOneLine(t, "the second agent", stderr)
	a.requireRunning()
	r := openReader(t, a.out)
	roundTrip(t, a.in, r, "still served")
	r.close()
	if code := a.stop(); code == 125 {
		t.Errorf("first agent exited %d", code)
	}
	if err := lockFree(filepath.Join(a.dir, "lock")); err != nil {
		t.Errorf("lock after the agent exited: %v", err)
	}
}

// lockFree returns nil when nobody holds a flock on path.
func lockFree(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("flock: %w", err)
	}
	return nil
}

// TestInOutsideDirLink: -in may name a FIFO outside DIR; its directory is
// resolved once at start with the same rule: a symlink in a directory
// others can write is refused (125) and nothing is made where it points.
func TestInOutsideDirLink(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	checkLeaks(t, false)
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777)
	target := t.TempDir()
	if err := os.Symlink(target, filepath.Join(shared, "l")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "fb")
	code, stderr := runAgent(t, nil, "run", "-dir", dir, "-in", filepath.Join(shared, "l", "in"), "--", "true")
	if code != 125 || !strings.Contains(stderr, "symbolic link") {
		t.Errorf("agent exited %d, want 125 refusing the link:\n%s", code, stderr)
	}
	requireOneLine(t, "the refusing agent", stderr)
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("the agent made %v through the link", ents)
	}
}
