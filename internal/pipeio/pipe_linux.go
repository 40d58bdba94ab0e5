package pipeio

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Pipe returns a pipe with close-on-exec on both ends. The end the agent
// uses is non-blocking so the runtime poller serves it (and deadlines wake
// it); the child's end stays blocking, as programs expect of stdio.
func Pipe(agentReads bool) (agent, child *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("make pipe: %w", err)
	}
	a, c := fds[1], fds[0]
	if agentReads {
		a, c = fds[0], fds[1]
	}
	// A new pipe end has no status flag set: O_NONBLOCK is all there is,
	// no F_GETFL needed.
	if _, err := unix.FcntlInt(uintptr(a), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("make pipe: %w", err)
	}
	return os.NewFile(uintptr(a), "|agent"), os.NewFile(uintptr(c), "|child"), nil
}

// Input returns a pipe to be a child's stdin: child is its read end,
// blocking, for the child. agent is one non-blocking descriptor of the
// same pipe open for reading and writing (its write end opened again
// through /proc/self/fd, as a FIFO is opened): it feeds the child, keeps
// the child from reading EOF, and takes back what the child left
// unread, so back is agent. Where /proc cannot open the pipe again,
// agent is the write end and back is child, which the caller then keeps
// to take leftovers back: two descriptors instead of one.
func Input() (agent, back, child *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, nil, fmt.Errorf("make pipe: %w", err)
	}
	child = os.NewFile(uintptr(fds[0]), "|child")
	rw, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fds[1]), unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fds[1])
		agent = os.NewFile(uintptr(rw), "|agent")
		return agent, agent, child, nil
	}
	if _, err := unix.FcntlInt(uintptr(fds[1]), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		child.Close()
		unix.Close(fds[1])
		return nil, nil, nil, fmt.Errorf("make pipe: %w", err)
	}
	return os.NewFile(uintptr(fds[1]), "|agent"), child, child, nil
}

// ReadEnd opens the pipe of f, an end Input returned, again for reading
// alone, without waiting (through /proc/self/fd, as a FIFO is opened):
// the end the agent keeps to take back what a child left unread once
// its input was ended, the end that writes being closed.
func ReadEnd(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	cerr := rc.Control(func(w uintptr) {
		fd, err = unix.Open("/proc/self/fd/"+strconv.Itoa(int(w)), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err = errors.Join(cerr, err); err != nil {
		return nil, fmt.Errorf("open the read end of pipe %s: %w", f.Name(), err)
	}
	return os.NewFile(uintptr(fd), "|agent-read"), nil
}
