//go:build linux

package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/testgate"
	"golang.org/x/sys/unix"
)

// pty is the master side of a pseudo-terminal a test opened.
type pty struct {
	t      *testing.T
	master *os.File // non-blocking: reads take deadlines
	seen   []byte   // everything read so far
}

// openPty opens a pseudo-terminal and returns its master and its slave;
// both are closed when t ends.
func openPty(t *testing.T) (*pty, *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		testgate.Skip(t, "open /dev/ptmx: %v", err)
	}
	master := os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return &pty{t: t, master: master}, slave
}

// foreground is the terminal's foreground process group.
func (p *pty) foreground() int {
	var pg int
	sc, err := p.master.SyscallConn()
	if err == nil {
		sc.Control(func(fd uintptr) { pg, err = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) })
	}
	if err != nil {
		return -1
	}
	return pg
}

func (p *pty) write(s string) {
	p.t.Helper()
	if _, err := p.master.Write([]byte(s)); err != nil {
		p.t.Fatalf("write to the terminal: %v", err)
	}
}

// expect reads the terminal until it has shown want.
func (p *pty) expect(want string) {
	p.t.Helper()
	deadline := time.Now().Add(hangTimeout)
	buf := make([]byte, 4096)
	for !bytes.Contains(p.seen, []byte(want)) {
		p.master.SetReadDeadline(deadline)
		n, err := p.master.Read(buf)
		p.seen = append(p.seen, buf[:n]...)
		if err != nil && !bytes.Contains(p.seen, []byte(want)) {
			p.t.Fatalf("terminal never showed %q (%v); it showed:\n%s", want, err, p.seen)
		}
	}
}

// startOnTerminal starts the agent as a session leader whose controlling
// terminal is its stdin, stdout and stderr.
func startOnTerminal(t *testing.T, slave *os.File, flags []string, program []string, helper string) *agent {
	t.Helper()
	a := &agent{t: t, dir: filepath.Join(t.TempDir(), "fb"), logDir: t.TempDir(), done: make(chan struct{})}
	a.in, a.out, a.status = filepath.Join(a.dir, "in"), filepath.Join(a.dir, "out"), filepath.Join(a.dir, "status.json")
	args := append(append([]string{"run", "-dir", a.dir}, flags...), "--")
	a.cmd = exec.Command(agentBin, append(args, program...)...)
	a.cmd.Env = agentEnv(t)
	if helper != "" {
		a.cmd.Env = append(a.cmd.Env, helperEnv+"="+helper)
	}
	a.cmd.Stdin, a.cmd.Stdout, a.cmd.Stderr = slave, slave, slave
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start the agent: %v", err)
	}
	slave.Close() // the agent has it: the terminal hangs up when it is gone
	a.pid = a.cmd.Process.Pid
	go func() {
		a.cmd.Wait()
		a.code = exitCode(a.cmd.ProcessState)
		close(a.done)
	}()
	t.Cleanup(a.cleanup)
	return a
}

// TestTerminalForeground: on the terminal it was started on, the agent
// gives the child the foreground, so that it can prompt on /dev/tty, and
// takes it back when the child ends.
func TestTerminalForeground(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requireBusybox(t)
	term, slave := openPty(t)
	a := startOnTerminal(t, slave, []string{"-restart", "on-failure", "-backoff-min", "1h", "-backoff-max", "1h"},
		[]string{busybox, "sh", "-c", `read x </dev/tty; echo "got $x" >&2; exit 3`}, "")
	pid := a.waitChild()
	if !eventually(hangTimeout, func() bool { return term.foreground() == pid }) {
		t.Fatalf("the terminal's foreground group is %d, want the child's %d", term.foreground(), pid)
	}
	term.write("hello\n")
	term.expect("got hello")
	a.waitStatus("the child exited", func(s status) bool { return s.State == "backoff" })
	if pg := term.foreground(); pg != a.pid {
		t.Errorf("after the child ended the foreground group is %d, want the agent's %d", pg, a.pid)
	}
	if code := a.stop(); code != 3 {
		t.Fatalf("agent exited with %d, want the child's 3", code)
	}
}

// TestTerminalSuspend: Ctrl-Z on the terminal sends TSTP to the child, which
// has the foreground, and the agent keeps serving.
func TestTerminalSuspend(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	term, slave := openPty(t)
	a := startOnTerminal(t, slave, nil, helperProgram(), "catchall")
	r := openReader(t, a.out)
	r.expectLine("ready")
	pid := a.waitChild()
	if !eventually(hangTimeout, func() bool { return term.foreground() == pid }) {
		t.Fatalf("the terminal's foreground group is %d, want the child's %d", term.foreground(), pid)
	}
	term.write("\x1a")
	r.expectLine("TSTP")
	roundTrip(t, a.in, r, "still serving")
	if st, err := readStat(a.pid); err != nil || st.state == 'T' {
		t.Fatalf("agent state %q, %v", st.state, err)
	}
	if code := a.stop(); code != 0 {
		t.Fatalf("agent exited with %d, want the child's 0", code)
	}
	expectStopSignal(r)
	r.close()
}
