package readwait

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The children of these tests are real programs (python3, sh, cat,
// busybox), since what is tested is how they wait; the test binary is a
// child only where it probes as another user (see_linux_test.go).

// bound is how long a test waits for anything a child shows.
const bound = 10 * time.Second

// child is a program on pipes or on a terminal, in its own group.
type child struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    *os.File // the agent's end of its input: a pipe's write end, or the master
	out   *os.File // where its output is read: a pipe's read end, or the master
	input *os.File // what NewProbe is given: in, or the slave until the child started
	seen  []byte   // output read and not yet expected
}

// need fails the test when prog is not installed (CI installs it).
func need(t testing.TB, prog string) {
	t.Helper()
	if _, err := exec.LookPath(prog); err != nil {
		t.Fatalf("%s is needed (CI installs it): %v", prog, err)
	}
}

// startPipes starts argv with its stdin a pipe and its stdout and stderr
// one other pipe, leading its own process group.
func startPipes(t testing.TB, env []string, argv ...string) *child {
	t.Helper()
	need(t, argv[0])
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	c := &child{t: t, cmd: exec.Command(argv[0], argv[1:]...), in: inW, out: outR, input: inW}
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = inR, outW, outW
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = c.cmd.Start()
	inR.Close()
	outW.Close()
	c.cleanup(err)
	return c
}

// startTTY starts argv on a new terminal, leading its own session.
func startTTY(t testing.TB, env []string, argv ...string) *child {
	t.Helper()
	need(t, argv[0])
	master, slave, err := tty.OpenPTY(tty.Winsize{Cols: 200, Rows: 50})
	require.NoError(t, err)
	c := &child{t: t, cmd: exec.Command(argv[0], argv[1:]...), in: master, out: master, input: slave}
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = slave, slave, slave
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = c.cmd.Start()
	c.cleanup(err)
	return c
}

// cleanup fails the test when the start failed, and has the child's
// group killed and waited for, and its files closed, when the test ends.
func (c *child) cleanup(startErr error) {
	c.t.Cleanup(func() {
		if startErr == nil && c.cmd.ProcessState == nil {
			unix.Kill(-c.cmd.Process.Pid, unix.SIGKILL)
			c.cmd.Wait()
		}
		c.in.Close()
		c.out.Close()
		c.input.Close()
	})
	require.NoError(c.t, startErr)
}

// pid is the child's pid, and its group's.
func (c *child) pid() int { return c.cmd.Process.Pid }

// probe makes the probe of the child's input. On a terminal, the agent's
// copy of the slave is closed then, as the agent does once its child has
// started.
func (c *child) probe() *Probe {
	c.t.Helper()
	p, err := NewProbe(c.input)
	require.NoError(c.t, err)
	if c.input != c.in {
		require.NoError(c.t, c.input.Close())
	}
	return p
}

// write writes s to the child's input.
func (c *child) write(s string) {
	c.t.Helper()
	_, err := c.in.Write([]byte(s))
	require.NoError(c.t, err)
}

// expect reads the child's output until it holds want, and drops it and
// what came before.
func (c *child) expect(want string) {
	c.t.Helper()
	require.NoError(c.t, c.out.SetReadDeadline(time.Now().Add(bound)))
	buf := make([]byte, 4096)
	for {
		if i := bytes.Index(c.seen, []byte(want)); i >= 0 {
			c.seen = c.seen[i+len(want):]
			return
		}
		n, err := c.out.Read(buf)
		c.seen = append(c.seen, buf[:n]...)
		if err != nil {
			c.t.Fatalf("waiting for %q in the output, got %q: %v", want, c.seen, err)
		}
	}
}

// interrupt sends SIGINT to the child's group.
func (c *child) interrupt() {
	c.t.Helper()
	require.NoError(c.t, unix.Kill(-c.pid(), unix.SIGINT))
}

// waitBlocked polls p until Blocked(pgid) is want, within bound.
func waitBlocked(t testing.TB, p *Probe, pgid int, want bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		got, err := p.Blocked(pgid)
		require.NoError(t, err, "%s", describe(pgid))
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Blocked(%d) is %v after %v, want %v; %s", pgid, got, bound, want, describe(pgid))
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// waitAsleep waits until process pid sleeps in what, a kind of system
// call (its /proc/PID/syscall shows it), within bound: then a probe sees
// a wait, not the way to it.
func waitAsleep(t testing.TB, pid int, what call) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
		require.NoError(t, err)
		nr, _, ok := parseSyscall(b)
		if ok && sleeping(pid) && kindOf(t, pid, nr) == what {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d does not wait in a call of kind %d: %s", pid, what, describe(pid))
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// waitRunning waits until process pid runs, within bound.
func waitRunning(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
		require.NoError(t, err)
		if string(b) == "running\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d does not run: %s", pid, describe(pid))
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// kindOf is what syscall nr of pid waits on, in pid's ABI.
func kindOf(t testing.TB, pid int, nr int) call {
	p := &Probe{}
	a, err := p.abiOf(pid)
	require.NoError(t, err)
	return a.kind(nr)
}

// sleeping reports whether process pid is in state S.
func sleeping(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')')
	return err == nil && i > 0 && i+2 < len(b) && b[i+2] == 'S'
}

// describe says what pid's threads do, for a failure's message.
func describe(pid int) string {
	var s strings.Builder
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, e := range tasks {
		dir := "/proc/" + strconv.Itoa(pid) + "/task/" + e.Name()
		sc, _ := os.ReadFile(dir + "/syscall")
		wc, _ := os.ReadFile(dir + "/wchan")
		s.WriteString("thread " + e.Name() + ": syscall " + strings.TrimSpace(string(sc)) + ", wchan " + string(wc) + "; ")
	}
	fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	for _, e := range fds {
		l, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + e.Name())
		s.WriteString("fd " + e.Name() + " -> " + l + "; ")
	}
	return s.String()
}

// children lists the children of pid's main thread.
func children(t testing.TB, pid int) []int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	require.NoError(t, err)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		require.NoError(t, err)
		pids = append(pids, n)
	}
	return pids
}

// checked starts the leak check; see leakcheck.Check.
func checked(t testing.TB) {
	t.Helper()
	leakcheck.Check(t, func() { nativeABI() })
}
