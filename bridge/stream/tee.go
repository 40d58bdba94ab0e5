//go:build linux

package stream

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/internal/tty"
)

// teeBuffer is the most of the child's output that waits for the agent's
// stdout; what comes while it is full is dropped and counted.
const teeBuffer = 256 << 10

// teeFlush is how long the copy still waiting for stdout at the end gets
// before it is dropped.
const teeFlush = 200 * time.Millisecond

// teeOut is the agent's stdout as -tee writes it: a copy of the stream
// child's output, best effort. offer never waits: what stdout cannot take
// in time is dropped and counted, so the output FIFO is never slowed by
// it. One writer goroutine, owned by the stream (run, close), writes to
// stdout through a descriptor of its own: a pipe or a terminal is opened
// again, non-blocking, as a new open file description (/proc/self/fd/1),
// so that the child's stderr, which may share the agent's stdout's, stays
// blocking; a socket is written with MSG_DONTWAIT; a regular file is
// written as it is. After a write fails (stdout's reader left), the copy
// is dropped whole.
type teeOut struct {
	f    *os.File
	w    io.Writer // f as tty.Output writes it: never stopped by TOSTOP
	sock bool      // f is a socket: written with MSG_DONTWAIT, waited for with poll
	log  *slog.Logger

	mu      sync.Mutex
	cond    sync.Cond
	buf     []byte // waiting for the writer
	closed  bool
	broken  bool // a write failed: everything offered is dropped
	written atomic.Uint64
	dropped atomic.Uint64
}

// newTeeOut opens the agent's stdout for -tee.
func newTeeOut(log *slog.Logger) (*teeOut, error) {
	t := &teeOut{log: log}
	t.cond.L = &t.mu
	var st unix.Stat_t
	if err := unix.Fstat(1, &st); err != nil {
		return nil, &os.PathError{Op: "tee: stat", Path: "stdout", Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFCHR:
		fd, err := unix.Open("/proc/self/fd/1", unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		if err == nil {
			t.f = os.NewFile(uintptr(fd), "stdout") // non-blocking: the poller waits
			t.w = tty.Output(t.f)
			return t, nil
		}
		// Written as it is, a blocking pipe or terminal could hold the
		// writer, and so a stop, for as long as its reader stalls.
		return nil, &os.PathError{Op: "tee: open non-blocking", Path: "/proc/self/fd/1", Err: err}
	case unix.S_IFSOCK:
		t.sock = true
	case unix.S_IFREG: // never waits
	default:
		return nil, fmt.Errorf("tee: stdout is not a pipe, terminal, socket or file (mode %#o)", st.Mode&unix.S_IFMT)
	}
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, &os.PathError{Op: "tee: dup", Path: "stdout", Err: err}
	}
	t.f = os.NewFile(uintptr(fd), "stdout")
	t.w = t.f
	return t, nil
}

// offer hands p to the writer without waiting; what does not fit is
// dropped. p may be reused once offer returns.
func (t *teeOut) offer(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := min(len(p), teeBuffer-len(t.buf))
	if t.closed || t.broken {
		n = 0
	}
	t.buf = append(t.buf, p[:n]...)
	t.dropped.Add(uint64(len(p) - n))
	t.cond.Broadcast()
}

// run writes what is offered until close; then what stdout takes within
// teeFlush, and drops the rest.
func (t *teeOut) run() {
	var spare []byte
	for {
		t.mu.Lock()
		for len(t.buf) == 0 && !t.closed {
			t.cond.Wait()
		}
		chunk, closed := t.buf, t.closed
		t.buf = spare[:0]
		t.mu.Unlock()
		if len(chunk) == 0 && closed {
			return
		}
		n, err := t.write(chunk)
		t.written.Add(uint64(n))
		t.dropped.Add(uint64(len(chunk) - n))
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.log.Warn("tee: writing to stdout failed; dropping the copy from now on", "err", err)
			t.mu.Lock()
			t.broken = true
			t.dropped.Add(uint64(len(t.buf)))
			t.buf = nil
			t.mu.Unlock()
		}
		spare = chunk
	}
}

// close ends run, which writes what is left for at most teeFlush; the
// caller waits for run, then closes the descriptor with done.
func (t *teeOut) close() {
	t.mu.Lock()
	t.closed = true
	t.cond.Broadcast()
	t.mu.Unlock()
	t.f.SetWriteDeadline(time.Now().Add(teeFlush))
}

// done closes the descriptor once run returned.
func (t *teeOut) done() { t.f.Close() }

// write writes p to stdout, waiting while it is full; it returns early
// when the write deadline set by close passes or stdout fails.
func (t *teeOut) write(p []byte) (int, error) {
	if !t.sock {
		return t.w.Write(p)
	}
	rc, err := t.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	written := 0
	for written < len(p) {
		var n int
		var werr error
		rc.Control(func(fd uintptr) {
			n, werr = unix.SendmsgN(int(fd), p[written:], nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
			if werr == unix.EAGAIN {
				n, werr = 0, nil
				t.mu.Lock()
				closed := t.closed
				t.mu.Unlock()
				if closed {
					werr = os.ErrDeadlineExceeded
					return
				}
				unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, 50)
			}
		})
		written += max(n, 0)
		if werr != nil {
			return written, werr
		}
	}
	return written, nil
}

// copyTee is copyOut for -tee: the child's stdout is read into the agent
// and written to the output FIFO (with its backpressure, as copyOut) and
// offered to the tee and the watchers, which never wait.
func (s *Engine) copyTee(w *wiring) {
	s.readOut(w, pipeio.PipeSize/4, func(p []byte) bool {
		s.tee.offer(p)
		s.watch.offer(p)
		s.first.output(p)
		if _, err := s.sink.Write(p); err != nil {
			s.cfg.Log.Warn("output dropped: the agent is stopping and no reader took it", "err", err)
			return false
		}
		return true
	})
}
