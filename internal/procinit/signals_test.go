//go:build linux

package procinit

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary print what Start read, one line of
// blocked signal numbers, and exit.
const helperEnv = "PROCINIT_TEST_SIGNALS"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		st, err := Start()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		var blocked []string
		for sig := syscall.Signal(1); sig <= 64; sig++ {
			if sigismember(&st.Blocked, sig) {
				blocked = append(blocked, strconv.Itoa(int(sig)))
			}
		}
		fmt.Println(strings.Join(blocked, " "))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStartSignals: a process started with USR1, USR2, WINCH and 40
// blocked, as a supervisor may start the agent, reads them as blocked.
func TestStartSignals(t *testing.T) {
	want := []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, 40}
	runtime.LockOSThread() // a child is forked with the mask of this thread
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	for _, sig := range want {
		sigaddset(&set, sig)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.Output()
	unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	got := strings.Fields(string(out))
	for _, sig := range want {
		if !slices.Contains(got, strconv.Itoa(int(sig))) {
			t.Errorf("signal %d is not read as blocked; read %q", sig, got)
		}
	}
}

func sigaddset(set *unix.Sigset_t, sig syscall.Signal) {
	n, w := uint(sig)-1, uint(unsafe.Sizeof(set.Val[0]))*8
	set.Val[n/w] |= 1 << (n % w)
}

func sigismember(set *unix.Sigset_t, sig syscall.Signal) bool {
	n, w := uint(sig)-1, uint(unsafe.Sizeof(set.Val[0]))*8
	return set.Val[n/w]&(1<<(n%w)) != 0
}
