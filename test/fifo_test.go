//go:build linux

package test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// fifoEnd is the test's end of a FIFO, opened with O_NONBLOCK so that no open
// blocks, and read and written through the runtime poller with deadlines so
// that no read or write blocks longer than hangTimeout.
type fifoEnd struct {
	t       *testing.T
	path    string
	f       *os.File
	pending []byte // read from the FIFO but not yet returned
}

// openWriter opens path for writing, waiting (at most hangTimeout) while the
// FIFO does not exist or nobody has it open for reading.
func openWriter(t *testing.T, path string) *fifoEnd {
	t.Helper()
	return openEnd(t, path, os.O_WRONLY)
}

// openReader opens path for reading, waiting (at most hangTimeout) while the
// FIFO does not exist. It does not wait for a writer.
func openReader(t *testing.T, path string) *fifoEnd {
	t.Helper()
	return openEnd(t, path, os.O_RDONLY)
}

func openEnd(t *testing.T, path string, flag int) *fifoEnd {
	t.Helper()
	var f *os.File
	var err error
	eventually(hangTimeout, func() bool {
		f, err = os.OpenFile(path, flag|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		return err == nil || !errors.Is(err, syscall.ENXIO) && !errors.Is(err, syscall.ENOENT)
	})
	if err != nil {
		t.Fatalf("open FIFO %s: %v", path, err)
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		f.Close()
		t.Fatalf("%s is not a FIFO (%v)", path, err)
	}
	e := &fifoEnd{t: t, path: path, f: f}
	t.Cleanup(e.close)
	return e
}

func (e *fifoEnd) close() {
	if e.f != nil {
		e.f.Close()
		e.f = nil
	}
}

// write writes all of b.
func (e *fifoEnd) write(b []byte) {
	e.t.Helper()
	e.f.SetWriteDeadline(time.Now().Add(hangTimeout))
	if _, err := e.f.Write(b); err != nil {
		e.t.Fatalf("write %d bytes to %s: %v", len(b), e.path, err)
	}
}

func (e *fifoEnd) writeLine(s string) { e.t.Helper(); e.write([]byte(s + "\n")) }

// readSome returns at most max bytes, waiting until at least one arrives.
// While no writer has the FIFO open a read returns EOF at once; that only
// means "not yet", so it is retried until the deadline.
func (e *fifoEnd) readSome(max int, deadline time.Time) ([]byte, error) {
	if len(e.pending) > 0 {
		n := min(max, len(e.pending))
		b := e.pending[:n:n]
		e.pending = e.pending[n:]
		return b, nil
	}
	buf := make([]byte, max)
	for {
		e.f.SetReadDeadline(deadline)
		n, err := e.f.Read(buf)
		if n > 0 {
			return buf[:n], nil
		}
		if err != io.EOF {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, os.ErrDeadlineExceeded
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readN returns exactly n bytes.
func (e *fifoEnd) readN(n int) []byte {
	e.t.Helper()
	deadline := time.Now().Add(hangTimeout)
	out := make([]byte, 0, n)
	for len(out) < n {
		b, err := e.readSome(min(n-len(out), 64<<10), deadline)
		if err != nil {
			e.t.Fatalf("read %s: got %d of %d bytes (%q...): %v", e.path, len(out), n, out[:min(len(out), 200)], err)
		}
		out = append(out, b...)
	}
	return out
}

// readLine returns the next line without its newline.
func (e *fifoEnd) readLine() string {
	e.t.Helper()
	return e.readLineWithin(hangTimeout)
}

// readLineWithin is readLine waiting at most d.
func (e *fifoEnd) readLineWithin(d time.Duration) string {
	e.t.Helper()
	deadline := time.Now().Add(d)
	var line []byte
	for {
		b, err := e.readSome(4096, deadline)
		if err != nil {
			e.t.Fatalf("read a line from %s: got %q: %v", e.path, line, err)
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			e.pending = append(b[i+1:len(b):len(b)], e.pending...)
			return string(append(line, b[:i]...))
		}
		line = append(line, b...)
	}
}

// expectLine reads the next line and fails unless it is want.
func (e *fifoEnd) expectLine(want string) {
	e.t.Helper()
	if got := e.readLine(); got != want {
		e.t.Fatalf("read line %q from %s, want %q", got, e.path, want)
	}
}

// expectQuiet fails if any byte arrives within d.
func (e *fifoEnd) expectQuiet(d time.Duration) {
	e.t.Helper()
	b, err := e.readSome(4096, time.Now().Add(d))
	if err == nil {
		e.t.Fatalf("unexpected bytes on %s: %q", e.path, b)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		e.t.Fatalf("read %s: %v", e.path, err)
	}
}

// roundTrip writes a line through a new writer, closes it and expects the
// line back from r.
func roundTrip(t *testing.T, in string, r *fifoEnd, line string) {
	t.Helper()
	w := openWriter(t, in)
	w.writeLine(line)
	w.close()
	r.expectLine(line)
}

// drainUntilExit reads and discards what r gets until the agent exits, at
// most timeout, and returns its exit code: for a child whose last words
// (the terminal's echo, say) the test does not look at, which the agent
// keeps for a reader.
func (e *fifoEnd) drainUntilExit(a *agent, timeout time.Duration) int {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for !a.exited() && time.Now().Before(deadline) {
		e.readSome(64<<10, time.Now().Add(20*time.Millisecond))
	}
	return a.wait(time.Until(deadline))
}
