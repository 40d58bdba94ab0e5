//go:build linux

package test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Readiness signals the tests wait for instead of sleeping: what the agent
// logs, what a FIFO holds, where a process blocks.

// waitLog waits until the agent has logged a line that contains every one
// of parts.
func (a *agent) waitLog(parts ...string) {
	a.t.Helper()
	logged := func() bool {
		for _, line := range strings.Split(a.stderr(), "\n") {
			if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
				return true
			}
		}
		return false
	}
	if !eventually(hangTimeout, func() bool { return logged() || a.exited() }) || !logged() {
		a.t.Fatalf("the agent never logged a line with %q (exited: %v); stderr:\n%s", parts, a.exited(), a.stderr())
	}
}

// waitWaitingFor waits until the agent says it waits for the FIFO path to
// be made.
func (a *agent) waitWaitingFor(path string) {
	a.t.Helper()
	a.waitLog(`"waiting for fifo"`, path)
}

// fifoHolds returns how many bytes wait in the FIFO at path, and its
// capacity. It looks through a write end opened without blocking, which
// needs a reader (the agent holds its FIFOs open for reading and writing)
// and neither takes nor adds a byte.
func fifoHolds(path string) (n, capacity int, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	if n, err = pipeHolds(f); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	err = control(f, func(fd int) error {
		capacity, err = unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("F_GETPIPE_SZ %s: %w", path, err)
	}
	return n, capacity, nil
}

// pipeHolds returns how many bytes wait in the pipe f is an end of.
func pipeHolds(f *os.File) (n int, err error) {
	err = control(f, func(fd int) error {
		n, err = unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("FIONREAD: %w", err)
	}
	return n, nil
}

// control runs fn on f's descriptor (f.Fd would make it blocking).
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// waitFIFOHolds waits until the FIFO at path holds at least n bytes.
func waitFIFOHolds(t *testing.T, path string, n int) {
	t.Helper()
	var got, capacity int
	var err error
	if !eventually(hangTimeout, func() bool { got, capacity, err = fifoHolds(path); return err == nil && got >= n }) {
		t.Fatalf("%s holds %d bytes of %d, want at least %d (%v)", path, got, capacity, n, err)
	}
}

// waitBlockedWriting waits until a process of the marked ones (those
// started by t) waits in a write to a full pipe: whatever reads that pipe
// does not keep up, or cannot go on.
func waitBlockedWriting(t *testing.T) {
	t.Helper()
	m := marker(t)
	blocked := func() bool {
		for _, p := range markedProcs(m) {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", p.pid)); err == nil && strings.Contains(string(b), "pipe_write") {
				return true
			}
		}
		return false
	}
	if !eventually(hangTimeout, blocked) {
		t.Fatalf("no process of the test is blocked writing to a full pipe:%s", describe(markedProcs(m)))
	}
}

// waitDrained waits until the agent has read everything written to the
// FIFO e writes.
func (e *fifoEnd) waitDrained() {
	e.t.Helper()
	var n int
	var err error
	if !eventually(hangTimeout, func() bool { n, err = pipeHolds(e.f); return err == nil && n == 0 }) {
		e.t.Fatalf("%s still holds %d unread bytes (%v)", e.path, n, err)
	}
}
