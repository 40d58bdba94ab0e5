package child

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SignalState is the signal state children start with: the signals the
// agent inherited as ignored or blocked, as far as the Go runtime lets it
// see them.
//
// The runtime installs its own handler before main for every signal but
// SIGHUP and SIGINT inherited as ignored and the job-control signals it
// leaves alone (CONT, TSTP, TTIN, TTOU), so only HUP, INT, TSTP, TTIN and
// TTOU inherited as ignored are knowable. It keeps the inherited signal mask
// on its threads, less the signals it must be able to receive (HUP, INT,
// QUIT, ILL, TRAP, ABRT, BUS, FPE, SEGV, TERM, STKFLT, CHLD, URG, PROF, SYS
// and 32 to 34), whose blocked bits it clears before main and keeps to
// itself; the rest is knowable, and all threads share it until the first
// signal.Notify.
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

// knowable are the signals whose inherited SIG_IGN the runtime leaves in
// place, so that it can still be read at start.
var knowable = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}

// InheritedSignals reads the signal state the agent was started with. Call
// it before signal.Notify for any signal: registering one replaces an
// inherited SIG_IGN with the runtime's handler.
func InheritedSignals() (*SignalState, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var st SignalState
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, nil, &st.Blocked); err != nil {
		return nil, fmt.Errorf("read signal mask: %w", err)
	}
	ign, err := ignoredMask()
	if err != nil {
		return nil, err
	}
	for _, sig := range knowable {
		if ign&(1<<(uint(sig)-1)) != 0 {
			st.Ignored = append(st.Ignored, sig)
		}
	}
	return &st, nil
}

// ignoredMask is SigIgn of /proc/thread-self/status: bit N-1 is signal N.
func ignoredMask() (uint64, error) {
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return 0, fmt.Errorf("read ignored signals: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("read ignored signals: %w", err)
			}
			return m, nil
		}
	}
	return 0, fmt.Errorf("read ignored signals: no SigIgn in /proc/thread-self/status")
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
