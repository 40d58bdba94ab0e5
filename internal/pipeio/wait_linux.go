package pipeio

import (
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// WaitReadable waits until f has bytes (or no writer left), or its read
// deadline passes.
func WaitReadable(f *os.File) error { return wait(f, unix.POLLIN, nil, nil) }

// WaitWritable waits until f has room (or no reader left), or its write
// deadline passes.
func WaitWritable(f *os.File) error { return wait(f, unix.POLLOUT, nil, nil) }

// Read is f.Read for a non-blocking f (a pipe, a FIFO, a terminal's
// master) that waits for bytes as this package's splices do: polling for
// the busy-poll window first, then parked.
func Read(f *os.File, p []byte) (int, error) {
	WaitReadable(f) // its error, if any, is f.Read's too
	return f.Read(p)
}

// wait waits until f has events: first by polling f's descriptor, for the
// window (or longer while armed holds a later end, see spin), then in the
// runtime's poller, through RawConn, which first resets the poller's
// readiness for f and then calls back: the callback asks poll(2) whether
// f is ready already, so that readiness that came before the reset is not
// lost, and what comes after it wakes the wait. parking, if set, is called
// just before the wait parks. f's deadlines apply to the parked wait; a
// deadline in the past is noticed at the latest when the window ends.
func wait(f *os.File, events int16, armed *atomic.Int64, parking func()) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	first := true
	var parkedAt time.Time
	check := func(fd uintptr) bool {
		if !first {
			return ready(fd, events)
		}
		first = false
		// The poller's readiness was reset before this call: whatever
		// the spin did, bytes that came before must be looked for now,
		// or the park would miss them.
		if spin(fd, events, armed) || ready(fd, events) {
			return true
		}
		if parking != nil {
			parking()
		}
		parkedAt = time.Now()
		return false
	}
	if events == unix.POLLOUT {
		err = rc.Write(check)
	} else {
		err = rc.Read(check)
	}
	if !parkedAt.IsZero() && err == nil { // a deadline says nothing of the traffic
		adapt(time.Since(parkedAt))
	}
	return err
}
