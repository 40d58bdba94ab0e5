package tty

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// The agent's own writes to its terminal (its log, a -tee copy) and its
// tcsetpgrp are made with SIGTTOU blocked on the calling thread. A process
// outside the terminal's foreground group that writes to it while it has
// TOSTOP, or that sets its foreground group, gets SIGTTOU unless it blocks
// or ignores that signal; the kernel then restarts the call. The agent
// catches SIGTTOU, to forward it to its children, so without the block
// such a write would be restarted for ever, each time sending the child
// another SIGTTOU. Blocked, the signal is never sent and the call goes
// through. SIGTTOU sent with kill(2) still reaches the agent: it is
// blocked only on the thread that writes, and only while it writes.

// Output returns f for the agent's writes: when f is a terminal,
// a writer whose every write is made with SIGTTOU blocked; else f itself.
// f is not put into blocking mode.
func Output(f *os.File) io.Writer {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	isTTY := false
	rc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		isTTY = err == nil
	})
	if !isTTY {
		return f
	}
	return ttyWriter{f: f}
}

// ttyWriter writes to a terminal with SIGTTOU blocked.
type ttyWriter struct{ f *os.File }

func (w ttyWriter) Write(p []byte) (n int, err error) {
	err = WithoutTTOU(func() error {
		n, err = w.f.Write(p)
		return err
	})
	return n, err
}

// WithoutTTOU runs do on one OS thread with SIGTTOU blocked there, and
// gives the thread its mask back after.
func WithoutTTOU(do func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ttou, old unix.Sigset_t
	ttou.Val[0] = 1 << (unix.SIGTTOU - 1) // below 32 on every architecture
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &ttou, &old); err != nil {
		return fmt.Errorf("block SIGTTOU: %w", err)
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return do()
}
