//go:build linux

package stream

import (
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/testlog"
)

// survivor is a process outside the child's tree that kept the stderr
// pipe: a second descriptor of the child's end, which start closes.
func survivor(t *testing.T, c *stderrCopy) *os.File {
	t.Helper()
	fd, err := unix.FcntlInt(c.w.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	require.NoError(t, err)
	return os.NewFile(uintptr(fd), "survivor")
}

// The copy's bytes reach a stderr that reads them, all of them.
func TestStderrCopyCopies(t *testing.T) {
	leakcheck.Check(t)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer outR.Close()
	log, logged := testlog.Logger()
	c, err := newStderrCopy(outW, bound.ReaderPatience, log)
	require.NoError(t, err)
	child := survivor(t, c)
	c.start(nil)
	_, err = child.Write([]byte("env: 'bsh': No such file or directory\n"))
	require.NoError(t, err)
	child.Close()
	c.finish()
	outW.Close()
	got, err := io.ReadAll(outR)
	require.NoError(t, err)
	require.Equal(t, "env: 'bsh': No such file or directory\n", string(got))
	require.Empty(t, logged.String())
}

// While the child runs, its stderr waits for the agent's as the child's
// own writes would: a stall longer than the patience drops nothing.
func TestStderrCopyWaitsWhileChildRuns(t *testing.T) {
	leakcheck.Check(t)
	outR, outW := fullPipe(t)
	defer outR.Close()
	defer outW.Close()
	log, logged := testlog.Logger()
	c, err := newStderrCopy(outW, bound.ReaderPatience, log)
	require.NoError(t, err)
	child := survivor(t, c)
	c.start(nil)
	line := "env: 'bsh': No such file or directory\n"
	_, err = child.Write([]byte(line))
	require.NoError(t, err)
	child.Close()
	// The copy took the line and waits for room: the pipe is empty.
	require.Eventually(t, func() bool { return unread(c.r) == 0 }, 10*time.Second, time.Millisecond)
	time.Sleep(bound.ReaderPatience + 500*time.Millisecond) // the stall, longer than the patience, is what is tested

	got := make(chan string, 1)
	go func() { b, _ := io.ReadAll(outR); got <- string(b) }()
	c.finish()
	outW.Close()
	out := <-got
	require.True(t, strings.HasSuffix(out, line), "the line after the stall: %q", out[max(0, len(out)-80):])
	require.Empty(t, logged.String())
}

// unread is how many bytes the pipe r holds, -1 when that cannot be
// read, without putting r into blocking mode as r.Fd() would.
func unread(r *os.File) int {
	n := -1
	if rc, err := r.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			if m, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
				n = m
			}
		})
	}
	return n
}

// A stderr that nobody reads (a stalled log driver, a terminal stopped
// with XOFF) holds the copy's finish, and so a session's close or the
// agent's stop, at most the patience, even while a process outside the
// tree keeps writing to the pipe; then the pipe is closed (the writer
// gets EPIPE), nothing is left running or open, and the log says how
// much was dropped.
func TestStderrCopyGivesUpStalledStderr(t *testing.T) {
	leakcheck.Check(t)
	outR, outW := fullPipe(t)
	defer outR.Close()
	defer outW.Close()
	log, logged := testlog.Logger()
	c, err := newStderrCopy(outW, bound.ReaderPatience, log)
	require.NoError(t, err)
	child := survivor(t, c)
	c.start(nil)

	var written atomic.Int64
	wrote := make(chan error, 1)
	go func() {
		defer child.Close()
		chunk := make([]byte, 4096)
		for {
			n, err := child.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				wrote <- err
				return
			}
		}
	}()
	// More than the pipe holds was written: the copy took some, and
	// waits for room on its stderr.
	require.Eventually(t, func() bool { return written.Load() > int64(c.cap) }, 10*time.Second, time.Millisecond)

	start := time.Now()
	c.finish()
	took := time.Since(start)
	// The patience and the grace, and on a busy machine perhaps seconds more.
	require.Less(t, took, bound.ReaderPatience+bound.StopGrace+5*time.Second, "finish waited for a stderr nobody reads")
	require.ErrorIs(t, <-wrote, unix.EPIPE, "the survivor's write once the pipe is closed")
	require.Contains(t, logged.String(), "dropped=")
	require.NotContains(t, logged.String(), "did not end")
}

// fullPipe is a pipe whose buffer is full: its reader takes nothing.
func fullPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	w.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	for {
		if _, err := w.Write(make([]byte, 4096)); err != nil {
			require.ErrorIs(t, err, os.ErrDeadlineExceeded, "fill the pipe")
			w.SetWriteDeadline(time.Time{})
			return r, w
		}
	}
}
