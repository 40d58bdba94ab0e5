//go:build linux

package test

// Tests of "Sharing the directory safely", host side (issue 18): send,
// send -wait, health and health -wait, as root, as a user in the
// directory's group and as a stranger, against a root agent in the setups
// the README and the Kubernetes example describe. Each command either
// works or fails with one clear line and writes nothing, exactly as the
// permissions say; the child's own user (-user) stays out unless -perm
// lets it in on purpose.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	helpers["mkfifo"] = helperMkfifo
}

// The users of the matrix. None has a passwd entry: they run with raw
// credentials.
var (
	// member is in the directory's group, as a pod's sidecar is (its own
	// uid and gid, the fsGroup as a supplementary group).
	member = &syscall.Credential{Uid: 2000, Gid: 2000, Groups: []uint32{dirGroup}}
	// stranger is in none of the directory's groups.
	stranger = &syscall.Credential{Uid: 2001, Gid: 2001, Groups: []uint32{}}
	// childUser is the agent's -user, with no supplementary groups, as the
	// agent starts it.
	childUser = &syscall.Credential{Uid: 1000, Gid: 1000, Groups: []uint32{}}
)

// dirGroup is the directory's group (a pod's fsGroup).
const dirGroup = 3000

// hostResult is how one host-side command ended.
type hostResult struct {
	code           int
	stdout, stderr string
}

// runAs runs "fifobridge ARGS..." as cred (nil: as this process), at most
// hangTimeout, with stdin from stdin (none when nil).
func runAs(t *testing.T, cred *syscall.Credential, stdin []byte, args ...string) hostResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentBin, args...)
	cmd.Env = agentEnv(t)
	cmd.SysProcAttr = dieWithTest()
	cmd.SysProcAttr.Credential = cred
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run fifobridge %q as %s: %v", args, who(cred), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("fifobridge %q as %s did not exit within %v; stderr:\n%s", args, who(cred), hangTimeout, stderr.String())
	}
	checkRace(t, "fifobridge "+strings.Join(args, " "), stderr.String())
	return hostResult{code: exitCode(cmd.ProcessState), stdout: stdout.String(), stderr: stderr.String()}
}

func who(cred *syscall.Credential) string {
	if cred == nil {
		return fmt.Sprintf("uid %d", os.Geteuid())
	}
	return fmt.Sprintf("uid %d gid %d groups %v", cred.Uid, cred.Gid, cred.Groups)
}

// requireReachable fails t unless cred can run the binary under test: the
// harness builds it in a temporary directory, and every directory on its
// path must let other users through.
func requireReachable(t *testing.T, cred *syscall.Credential) {
	t.Helper()
	if res := runAs(t, cred, nil, "version"); res.code != 0 {
		t.Fatalf("%s cannot run %s (exit %d): %s; every directory on its path needs o+x", who(cred), agentBin, res.code, res.stderr)
	}
}

// hostSetup is a FIFO directory as a README example makes it.
type hostSetup struct {
	name  string
	mode  os.FileMode // DIR's mode, with setgid and sticky bits
	gid   int         // DIR's group
	flags []string    // run flags besides -dir, -mode exec and -user
	// admits says whether a user may send and check health; childIn
	// whether the child's user may write DIR/in and make reply FIFOs.
	admits  func(cred *syscall.Credential) bool
	childIn bool
	// entries are the modes (permission bits, sticky bit) and group of
	// what the agent makes in DIR.
	entries map[string]os.FileMode
	group   int
}

func inGroup(cred *syscall.Credential) bool {
	return cred == nil || cred.Gid == dirGroup || len(cred.Groups) > 0 && cred.Groups[0] == dirGroup
}

func anyone(*syscall.Credential) bool { return true }

var hostSetups = []hostSetup{
	{
		name: "group dir 2770", mode: 0o770 | os.ModeSetgid, gid: dirGroup,
		admits: inGroup, group: dirGroup,
		entries: map[string]os.FileMode{"in": 0o620, "out": 0o640, "replies": 0o733 | os.ModeSticky, "lock": 0o640, "status.json": 0o640},
	},
	{
		name: "perm 0666 in a 1777 dir", mode: 0o777 | os.ModeSticky, gid: 0, flags: []string{"-perm", "0666"},
		admits: anyone, childIn: true, group: 0,
		entries: map[string]os.FileMode{"in": 0o622, "out": 0o644, "replies": 0o733 | os.ModeSticky, "lock": 0o644, "status.json": 0o644},
	},
	{
		// Members may enter DIR but not list it: nothing on the host side
		// needs to.
		name: "enter-only group dir 2710", mode: 0o710 | os.ModeSetgid, gid: dirGroup,
		admits: inGroup, group: dirGroup,
		entries: map[string]os.FileMode{"in": 0o620, "out": 0o640, "replies": 0o733 | os.ModeSticky, "lock": 0o640, "status.json": 0o640},
	},
	{
		name: "pod dir 2750", mode: 0o750 | os.ModeSetgid, gid: dirGroup, flags: []string{"-perm", "0660"},
		admits: inGroup, group: dirGroup,
		entries: map[string]os.FileMode{"in": 0o620, "out": 0o640, "replies": 0o733 | os.ModeSticky, "lock": 0o640, "status.json": 0o640},
	},
}

// makeDir makes DIR with the setup's owner, group and mode.
func (s hostSetup) makeDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(sharedTemp(t), "fb")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 0, s.gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, s.mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostUsers is the matrix of who may do what.
func TestHostUsers(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	for _, cred := range []*syscall.Credential{member, stranger, childUser} {
		requireReachable(t, cred)
	}
	senders := []struct {
		name string
		cred *syscall.Credential
	}{{"root", nil}, {"member", member}, {"stranger", stranger}}
	for _, s := range hostSetups {
		t.Run(s.name, func(t *testing.T) {
			checkLeaks(t, false)
			flags := append([]string{"-mode", "exec", "-user", "1000:1000"}, s.flags...)
			a := startAgent(t, agentConfig{dir: s.makeDir(t), flags: flags, program: []string{busybox, "cat"}})
			a.waitStatus("running", func(st status) bool { return st.State == "running" })
			waitServing(t, a)
			s.requireEntries(t, a.dir)
			sent := &requestCount{a: a}
			for _, u := range senders {
				t.Run(u.name, func(t *testing.T) {
					if s.admits(u.cred) {
						sent.n += requireHostWorks(t, a, u.cred)
					} else {
						requireHostRefused(t, a, u.cred)
						sent.requireOnly(t)
					}
				})
			}
			t.Run("child user", func(t *testing.T) {
				s.requireChildAccess(t, a)
				sent.requireOnly(t)
			})
		})
	}
}

// requireEntries checks the modes and group of what the agent made in dir.
func (s hostSetup) requireEntries(t *testing.T, dir string) {
	t.Helper()
	for name, want := range s.entries {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := fi.Mode() & (os.ModePerm | os.ModeSticky | os.ModeSetgid)
		gid := fi.Sys().(*syscall.Stat_t).Gid
		if got != want || int(gid) != s.group {
			t.Errorf("DIR/%s has mode %v group %d, want %v group %d", name, got, gid, want, s.group)
		}
	}
}

// requireHostWorks: health, health -wait, send and send -wait all succeed
// as cred. It returns how many requests the agent answered.
func requireHostWorks(t *testing.T, a *agent, cred *syscall.Credential) (answered int) {
	t.Helper()
	for _, args := range [][]string{{"health", "-dir", a.dir}, {"health", "-dir", a.dir, "-wait", "5s"}} {
		if res := runAs(t, cred, nil, args...); res.code != 0 {
			t.Errorf("fifobridge %q as %s exited %d, want 0; stderr:\n%s", args, who(cred), res.code, res.stderr)
		}
	}
	for _, args := range [][]string{{"send", "-dir", a.dir, "hello"}, {"send", "-dir", a.dir, "-wait", "5s", "hello"}} {
		res := runAs(t, cred, nil, args...)
		if res.code != 0 || res.stdout != "hello\n" {
			t.Errorf("fifobridge %q as %s exited %d printing %q, want 0 and %q; stderr:\n%s", args, who(cred), res.code, res.stdout, "hello\n", res.stderr)
			continue
		}
		answered++
	}
	requireNoReplies(t, a.dir)
	return answered
}

// requireHostRefused: as cred, health and health -wait exit 1, send and
// send -wait 125, each with one clear line, and nothing reaches the agent.
func requireHostRefused(t *testing.T, a *agent, cred *syscall.Credential) {
	t.Helper()
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"health", "-dir", a.dir}, 1},
		{[]string{"health", "-dir", a.dir, "-wait", "300ms"}, 1},
		{[]string{"send", "-dir", a.dir, "hello"}, 125},
		{[]string{"send", "-dir", a.dir, "-wait", "300ms", "hello"}, 125},
	} {
		res := runAs(t, cred, nil, c.args...)
		if res.code != c.code || res.stdout != "" {
			t.Errorf("fifobridge %q as %s exited %d printing %q, want %d and nothing; stderr:\n%s", c.args, who(cred), res.code, res.stdout, c.code, res.stderr)
		}
		requireOneLine(t, fmt.Sprintf("fifobridge %q as %s", c.args, who(cred)), res.stderr)
		if !strings.Contains(res.stderr, "permission denied") {
			t.Errorf("fifobridge %q as %s does not say permission denied: %q", c.args, who(cred), res.stderr)
		}
	}
}

// requestCount is how many requests the test sent that an agent should
// have accepted.
type requestCount struct {
	a *agent
	n int
}

// requireOnly fails t unless the agent accepted exactly the requests
// counted and rejected none, and no reply FIFO is left. A last request,
// sent as root, marks the point: once the status counts it, it counts
// every line that was in the input FIFO before it.
func (c *requestCount) requireOnly(t *testing.T) {
	t.Helper()
	if res := runAs(t, nil, nil, "send", "-dir", c.a.dir, "marker"); res.code != 0 {
		t.Fatalf("the marker request exited %d: %s", res.code, res.stderr)
	}
	c.n++
	var st status
	eventually(hangTimeout, func() bool {
		var err error
		st, err = c.a.readStatus()
		return err == nil && st.Requests.Completed >= c.n
	})
	if st.Requests.Accepted != c.n || st.Requests.Rejected != 0 {
		t.Errorf("requests %+v; want %d accepted, none rejected: a refused user reached the agent", st.Requests, c.n)
	}
	requireNoReplies(t, c.a.dir)
}

// requireChildAccess: the child's user may write DIR/in and make reply
// FIFOs only where the setup lets it on purpose (and the agent warns).
func (s hostSetup) requireChildAccess(t *testing.T, a *agent) {
	bin := sharedBin(t)
	probe := func(helper string, args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(agentEnv(t), helperEnv+"="+helper)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: childUser}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q as the child's user: %v: %s", helper, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := probe("probe", "write", a.in)
	made := probe("mkfifo", filepath.Join(a.dir, "replies", "child-probe"))
	warned := strings.Contains(a.stderr(), "-user: the child's user can drive the agent")
	if s.childIn {
		if write != "ok" || made != "ok" || !warned {
			t.Errorf("the child's user: write in %q, make a reply FIFO %q, warned %v; want ok, ok, true", write, made, warned)
		}
		os.Remove(filepath.Join(a.dir, "replies", "child-probe"))
		return
	}
	if !strings.Contains(write, "permission denied") || !strings.Contains(made, "permission denied") || warned {
		t.Errorf("the child's user: write in %q, make a reply FIFO %q, warned %v; want permission denied twice, no warning", write, made, warned)
	}
	res := runAs(t, childUser, nil, "send", "-dir", a.dir, "hello")
	if res.code != 125 {
		t.Errorf("send as the child's user exited %d, want 125; stderr:\n%s", res.code, res.stderr)
	}
	requireOneLine(t, "send as the child's user", res.stderr)
}

// helperMkfifo PATH makes a FIFO at PATH; it prints "ok" or the error, and
// exits 0.
func helperMkfifo(args []string) int {
	if err := unix.Mkfifo(args[0], 0o600); err != nil {
		fmt.Println(err)
	} else {
		fmt.Println("ok")
	}
	return 0
}

// TestHostUsersStreamMode: a user of the directory's group who sends to an
// agent in stream mode is told so, with nothing written: send read the
// status file and checked the agent's lock, both as that user.
func TestHostUsersStreamMode(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	checkLeaks(t, false)
	requireReachable(t, member)
	s := hostSetups[2] // enter-only
	a := startAgent(t, agentConfig{dir: s.makeDir(t), program: []string{busybox, "cat"}})
	r := openReader(t, a.out)
	defer r.close()
	a.waitStatus("running", func(st status) bool { return st.State == "running" })
	res := runAs(t, member, nil, "send", "-dir", a.dir, "hello")
	if res.code != 125 || !strings.Contains(res.stderr, "stream mode") {
		t.Fatalf("send as the group member exited %d, want 125 saying stream mode; stderr:\n%s", res.code, res.stderr)
	}
	requireOneLine(t, "send", res.stderr)
	r.expectQuiet(200 * time.Millisecond)
}
