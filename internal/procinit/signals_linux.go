package procinit

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Signals is the signal state the agent was started with, as far as the
// Go runtime lets it be seen.
//
// The runtime installs its own handler before main for every signal but
// SIGHUP and SIGINT inherited as ignored and the job-control signals it
// leaves alone (CONT, TSTP, TTIN, TTOU), so only HUP, INT, TSTP, TTIN and
// TTOU inherited as ignored are knowable. It keeps the inherited signal
// mask on its threads, less the signals it must be able to receive (HUP,
// INT, QUIT, ILL, TRAP, ABRT, BUS, FPE, SEGV, TERM, STKFLT, CHLD, URG,
// PROF, SYS and 32 to 34), whose blocked bits it clears before main and
// keeps to itself; the rest is knowable, and every thread has it until
// signal.Notify or a thread of the program's own changes it.
type Signals struct {
	// Blocked is the inherited mask that stayed blocked.
	Blocked unix.Sigset_t
	// Ignored are the knowable signals inherited as ignored.
	Ignored []os.Signal
}

// knowable are the signals whose inherited SIG_IGN the runtime leaves in
// place, so that it can still be read at start.
var knowable = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}

// inheritedSignals reads the signal state the agent was started with
// from the calling thread. It must run before signal.Notify for any
// signal (registering one replaces an inherited SIG_IGN with the
// runtime's handler) and before anything changes a thread's mask.
func inheritedSignals() (*Signals, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var st Signals
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
