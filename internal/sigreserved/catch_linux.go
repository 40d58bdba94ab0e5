package sigreserved

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// reserved are the realtime signals the Go runtime neither handles nor lets
// os/signal register: 32 (glibc's SIGCANCEL) and 34 (glibc's SIGRTMIN,
// musl's SIGSYNCCALL); 33 is the runtime's own and handled. Left at their
// default action, one sent with kill(2) would end the agent.
var reserved = []syscall.Signal{32, 34}

const (
	sigDFL = 0
	sigIGN = 1
)

// Catch gives each reserved signal that is at its default action the
// action of reservedAction: where the architecture has the handler built
// in, a handler that returns at once, so that the signal is caught and
// dropped at any moment, during a fork too; execve resets a caught signal
// to its default, so children start with it at the default, as the agent
// did. Elsewhere the signal is ignored, also in children. A reserved
// signal the agent inherited as ignored stays ignored, also in children;
// one that already has a handler (a C library's, in a cgo build) keeps it.
// Call it once, at start.
func Catch() error {
	for _, sig := range reserved {
		var old kernelSigaction
		if err := sigaction(sig, nil, &old); err != nil {
			return err
		}
		if old.handler != sigDFL {
			continue
		}
		act := reservedAction()
		if err := sigaction(sig, &act, nil); err != nil {
			return err
		}
	}
	return nil
}

// sigaction is rt_sigaction(2): it sets sig's action to act unless act is
// nil, and reads the one before into old unless old is nil.
func sigaction(sig syscall.Signal, act, old *kernelSigaction) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), sigsetSize, 0, 0)
	if errno != 0 {
		return fmt.Errorf("set the action of signal %d: %w", sig, errno)
	}
	return nil
}
