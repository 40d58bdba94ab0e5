//go:build linux

package sigreserved

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestCatch: after Catch, 32 and 34 have an action other than the
// default, and sent to the process while it forks, they do not end it.
func TestCatch(t *testing.T) {
	if err := Catch(); err != nil {
		t.Fatal(err)
	}
	for _, sig := range reserved {
		var act kernelSigaction
		if err := sigaction(sig, nil, &act); err != nil {
			t.Fatal(err)
		}
		if act.handler == sigDFL {
			t.Fatalf("signal %d is still at its default action", sig)
		}
	}
	for range 50 {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // while the test forks
			defer wg.Done()
			for i := range 16 {
				syscall.Kill(os.Getpid(), reserved[i%len(reserved)])
			}
		}()
		err := exec.Command("true").Run()
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestCatchChildren: a child of a process that ran Catch starts with 32
// and 34 at their default where the handler is built in (execve resets a
// caught signal), and ignored elsewhere.
func TestCatchChildren(t *testing.T) {
	if err := Catch(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("cat", "/proc/self/status").Output()
	if err != nil {
		t.Fatal(err)
	}
	var ign uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "SigIgn:"); ok {
			if ign, err = strconv.ParseUint(strings.TrimSpace(v), 16, 64); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantIgnored := reservedAction().handler == sigIGN
	for _, sig := range reserved {
		if got := ign&(1<<(sig-1)) != 0; got != wantIgnored {
			t.Errorf("signal %d ignored in the child: %v, want %v (SigIgn %016x)", sig, got, wantIgnored, ign)
		}
	}
}
