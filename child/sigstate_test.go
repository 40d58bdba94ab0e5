//go:build linux

package child

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestForTerminal: a terminal child's state is the agent's less the
// job-control signals, blocked or ignored; the agent's is left as it was.
func TestForTerminal(t *testing.T) {
	if (*SignalState)(nil).forTerminal() != nil {
		t.Fatal("nil state: want nil")
	}
	var st SignalState
	for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGWINCH, 40, syscall.SIGINT, syscall.SIGTTIN, syscall.SIGTTOU} {
		sigaddset(&st.Blocked, sig)
	}
	st.Ignored = []os.Signal{syscall.SIGHUP, syscall.SIGTSTP}
	agent := st.Blocked
	term := st.forTerminal()
	var want unix.Sigset_t
	for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGWINCH, 40} {
		sigaddset(&want, sig)
	}
	if term.Blocked != want {
		t.Errorf("terminal child's mask %x, want %x", term.Blocked.Val, want.Val)
	}
	if len(term.Ignored) != 0 {
		t.Errorf("terminal child ignores %v, want none", term.Ignored)
	}
	if st.Blocked != agent || len(st.Ignored) != 2 {
		t.Errorf("the agent's state changed: mask %x, ignored %v", st.Blocked.Val, st.Ignored)
	}
}

// sigaddset adds sig to set.
func sigaddset(set *unix.Sigset_t, sig syscall.Signal) {
	n, w := uint(sig)-1, uint(unsafe.Sizeof(set.Val[0]))*8
	set.Val[n/w] |= 1 << (n % w)
}
