package readwait

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fifobridge/fifobridge/internal/testgate"
	"github.com/stretchr/testify/require"
)

// TestMain makes the test binary a prober of its own: with
// READWAIT_PROBE=PGID it probes group PGID for the input it holds as
// descriptor 3, prints what it saw, and exits.
func TestMain(m *testing.M) {
	if pg := os.Getenv("READWAIT_PROBE"); pg != "" {
		os.Exit(probeMain(pg))
	}
	os.Exit(m.Run())
}

func probeMain(pg string) int {
	pgid, err := strconv.Atoi(pg)
	if err != nil {
		fmt.Println(err)
		return 2
	}
	p, err := NewProbe(os.NewFile(3, "input"))
	if err != nil {
		fmt.Println("new:", err)
		return 1
	}
	blocked, err := p.Blocked(pgid)
	fmt.Printf("blocked=%v cannot=%v err=%v\n", blocked, errors.Is(err, ErrCannotSee), err)
	return 0
}

// asNobody runs this test binary as a prober of python's group, as user
// nobody, with wrap (a command line that ends by running its arguments)
// before it, and returns what it printed.
func asNobody(t *testing.T, c *child, wrap ...string) string {
	t.Helper()
	// The test binary's directory is the go command's, private to root.
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "prober")
	copyFile(t, exe, bin)

	argv := append(wrap, bin, "-test.run=^$")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "READWAIT_PROBE="+strconv.Itoa(c.pid()))
	cmd.ExtraFiles = []*os.File{c.in}
	if len(wrap) == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.TrimSpace(string(out))
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

// TestCannotSee: a prober that may not look at python's waits (another
// user's process) says it cannot see, rather than "not blocked", also
// where /proc hides the process (hidepid).
func TestCannotSee(t *testing.T) {
	checked(t)
	if os.Geteuid() != 0 {
		testgate.Skip(t, "probing as another user needs root")
	}
	need(t, "unshare")
	need(t, "setpriv")
	c, p := pythonPipes(t)
	waitBlocked(t, p, c.pid(), true) // as root, it is seen

	out := asNobody(t, c)
	require.Contains(t, out, "blocked=false cannot=true", "another user's process")
	require.Regexp(t, `read /proc/[0-9]+/fd/0: permission denied`, out)

	hidden := asNobody(t, c, "unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount -t proc -o hidepid=2 proc /proc && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"`, "sh")
	require.Contains(t, hidden, "blocked=false cannot=true", "a process /proc hides")
	require.Contains(t, hidden, "/proc does not show it")
}

// TestWchan: where /proc/PID/syscall cannot be read, wchan tells: a
// pipe read, a terminal read and a select or poll, with descriptor 0 the
// input. The rule is looser (wchan names no descriptor): python reading
// another pipe counts as reading its input pipe.
func TestWchan(t *testing.T) {
	checked(t)
	c, p := pythonPipes(t)
	p.wchanOnly = true
	waitBlocked(t, p, c.pid(), true)
	c.write("import time; print('sleep'); time.sleep(60)\n")
	c.expect("sleep\n")
	waitAsleep(t, c.pid(), callOther)
	blocked, err := p.Blocked(c.pid())
	require.NoError(t, err)
	require.False(t, blocked, "asleep: %s", describe(c.pid()))
	c.interrupt()
	c.expect(">>> ")
	c.write("import os; r, w = os.pipe(); print('read'); os.read(r, 1)\n")
	c.expect("read\n")
	waitAsleep(t, c.pid(), callRead)
	blocked, err = p.Blocked(c.pid())
	require.NoError(t, err)
	require.True(t, blocked, "a read of another pipe looks the same")

	for _, argv := range [][]string{{"sh", "-i"}, {"python3", "-i", "-q"}, {"busybox", "sh", "-i"}} {
		c := startTTY(t, []string{"TERM=dumb", "PS1=ready$ ", "ENV="}, argv...)
		p := c.probe()
		p.wchanOnly = true
		waitBlocked(t, p, c.pid(), true)
	}
	other := startTTY(t, nil, "cat")
	p = other.probe()
	p.wchanOnly = true
	waitAsleep(t, c.pid(), callRead)
	blocked, err = p.Blocked(c.pid())
	require.NoError(t, err)
	require.False(t, blocked, "another terminal's reader, and python reads another pipe: %s", describe(c.pid()))
}
