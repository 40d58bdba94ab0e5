package pipeio

import (
	"fmt"
	"os"

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
