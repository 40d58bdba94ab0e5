package child

import (
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SignalState is the signal state children start with: the signals the
// agent inherited as blocked or ignored, as procinit.Start read them.
type SignalState struct {
	// Blocked is the mask children start with.
	Blocked unix.Sigset_t
	// Ignored are ignored in children.
	Ignored []os.Signal
	// Catch is where the agent catches Ignored; empty when it does not.
	//
	// A caught signal is reset to the default action in every child
	// before exec (runtime.clearSignalHandlers), and syscall.SysProcAttr
	// has no way to ignore it there, so each start ignores Ignored in the
	// agent for the time of the fork and then gives them back to Catch:
	// one of them that reaches the agent during a fork is lost.
	Catch chan<- os.Signal
}

// forkWith runs fork, which forks from the calling thread, so that the child
// starts with st: the thread's mask, which the child keeps, is set to
// Blocked, and Ignored are ignored while it runs. The caller is locked to
// its OS thread.
func (st *SignalState) forkWith(fork func() (int, error)) (int, error) {
	if st == nil {
		return fork()
	}
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &st.Blocked, nil); err != nil {
		return 0, fmt.Errorf("set signal mask: %w", err)
	}
	if len(st.Ignored) == 0 {
		return fork()
	}
	signal.Ignore(st.Ignored...)
	pid, err := fork()
	if st.Catch != nil {
		signal.Notify(st.Catch, st.Ignored...)
	}
	return pid, err
}

// sessionSignals are the signals a terminal child starts with at their
// default and unblocked, whatever the agent inherited: it is a person's
// session, not a background job (see forTerminal).
var sessionSignals = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT,
	syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}

// forTerminal is st for a child on a terminal of its own (Spec.Ctty):
// the same, less sessionSignals, which are neither blocked nor ignored.
// The other signals the agent inherited as blocked stay so. A nil st
// stays nil.
func (st *SignalState) forTerminal() *SignalState {
	if st == nil {
		return nil
	}
	t := *st
	t.Ignored = nil
	for _, sig := range st.Ignored {
		if s, ok := sig.(syscall.Signal); !ok || !slices.Contains(sessionSignals, s) {
			t.Ignored = append(t.Ignored, sig)
		}
	}
	for _, sig := range sessionSignals {
		sigdelset(&t.Blocked, sig)
	}
	return &t
}

// sigdelset removes sig from set.
func sigdelset(set *unix.Sigset_t, sig syscall.Signal) {
	n, w := uint(sig)-1, uint(unsafe.Sizeof(set.Val[0]))*8
	set.Val[n/w] &^= 1 << (n % w)
}
