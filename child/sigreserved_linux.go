package child

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// reserved are the realtime signals the Go runtime neither handles nor lets
// os/signal register (libc's SIGCANCEL and glibc's SIGRTMIN; 33 is the
// runtime's own and handled): left at their default action, one sent with
// kill(2) would end the agent.
var reserved = []syscall.Signal{32, 34}

// kernelSigaction is struct sigaction as rt_sigaction(2) takes it on every
// Linux architecture but MIPS; only the handler is ever set, the rest is 0.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

const (
	sigDFL = 0
	sigIGN = 1
)

func setDisposition(sig syscall.Signal, handler uintptr) error {
	act := kernelSigaction{handler: handler}
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(&act)), 0, unsafe.Sizeof(act.mask), 0, 0)
	if errno != 0 {
		return fmt.Errorf("set the action of signal %d: %w", sig, errno)
	}
	return nil
}

// ignoreReserved ignores every reserved signal that is at its default, and
// returns them; the caller sets them back to the default around each fork
// (restoreReserved), so that children start with them as the agent did.
func ignoreReserved(inheritedIgnored uint64) ([]syscall.Signal, error) {
	var set []syscall.Signal
	for _, sig := range reserved {
		if inheritedIgnored&(1<<(uint(sig)-1)) != 0 {
			continue // ignored already, also in children
		}
		if err := setDisposition(sig, sigIGN); err != nil {
			return set, err
		}
		set = append(set, sig)
	}
	return set, nil
}

// setReserved sets every signal of sigs to handler.
func setReserved(sigs []syscall.Signal, handler uintptr) error {
	for _, sig := range sigs {
		if err := setDisposition(sig, handler); err != nil {
			return err
		}
	}
	return nil
}
