//go:build linux

package test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// An agent started under a wrapper (unshare --fork, a shell) is not the
// process the harness starts, and looking for it among the wrapper's
// children loses to an agent that has exited and been reaped by then. So
// the wrapper runs the agent through the test binary as a tiny launcher
// (its first argument execReportArg): it sends one message on a Unix socket the harness holds
// and then execs the agent, keeping its pid. The kernel attaches the
// sender's pid to the message, translated into the receiver's PID
// namespace, so the harness learns the agent's pid here whether or not the
// agent still runs, from any PID namespace, without searching.
//
// The launcher is a Go program: it passes on what it inherited, but for
// the signals the Go runtime takes over at start (all but HUP, INT and the
// job-control ones), which it passes on at their default; a test that needs
// a wrapped agent to inherit another signal state must set it up with
// wrapExecs.

// execReportArg, followed by the descriptor of the socket to report on, as
// the first argument makes the test binary the launcher. An argument, not
// the environment: a wrapper may be the test binary too.
const execReportArg = "-fifobridge-test-exec-report="

// execReport is the launcher: report on the socket, then exec PROGRAM
// ARG... (its arguments). It runs before helpers are looked at, since the
// agent it execs needs helperEnv for its own child.
func execReport(fdText string, args []string) int {
	fd, err := strconv.Atoi(fdText)
	if err == nil {
		_, err = syscall.Write(fd, []byte{'p'})
		syscall.Close(fd)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "exec report on descriptor %s: %v\n", fdText, err)
		return 2
	}
	err = syscall.Exec(args[0], args, os.Environ())
	fmt.Fprintf(os.Stderr, "exec report: exec %s: %v\n", args[0], err)
	return 2
}

// pidReport is the harness's end of a launcher's report socket.
type pidReport struct {
	ours, theirs *os.File
}

// newPIDReport makes the socket pair: theirs is for the launcher, ours
// receives the launcher's credentials.
func newPIDReport() (*pidReport, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	if err := unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, fmt.Errorf("SO_PASSCRED: %w", err)
	}
	return &pidReport{ours: os.NewFile(uintptr(fds[0]), "pid report"), theirs: os.NewFile(uintptr(fds[1]), "pid report, launcher's end")}, nil
}

// pid waits at most timeout for the launcher's report and returns the pid
// it was sent from, as seen in this PID namespace. It fails when every
// holder of the launcher's end closed it without a report (the wrapper
// exited without running the launcher). Close theirs after starting the
// wrapper, before calling pid.
func (p *pidReport) pid(timeout time.Duration) (int, error) {
	conn, err := net.FileConn(p.ours)
	if err != nil {
		return 0, fmt.Errorf("socket of the pid report: %w", err)
	}
	defer conn.Close()
	uc := conn.(*net.UnixConn)
	uc.SetReadDeadline(time.Now().Add(timeout))
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(unix.SizeofUcred))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, fmt.Errorf("no report from the launcher within %v", timeout)
	}
	if err != nil {
		return 0, fmt.Errorf("read the pid report: %w", err)
	}
	if n == 0 {
		return 0, errors.New("the wrapper ended without running the agent")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return 0, fmt.Errorf("pid report without credentials (%d messages): %v", len(msgs), err)
	}
	cred, err := unix.ParseUnixCredentials(&msgs[0])
	if err != nil {
		return 0, fmt.Errorf("pid report credentials: %w", err)
	}
	return int(cred.Pid), nil
}

// close closes both ends (ours only, once pid was called).
func (p *pidReport) close() {
	p.ours.Close()
	p.theirs.Close()
}
