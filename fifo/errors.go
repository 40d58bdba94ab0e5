//go:build linux

package fifo

import "errors"

var (
	// ErrNotFIFO is returned when a path exists but is not a named pipe.
	ErrNotFIFO = errors.New("not a fifo")

	// ErrNoReader is returned by OpenWriterNow when no process has the FIFO
	// open for reading.
	ErrNoReader = errors.New("no reader")

	// ErrClosed is returned by a Source or Sink that has been closed.
	ErrClosed = errors.New("fifo closed")

	// ErrPending is returned by a Source made with PendingSourceAt that
	// serves no FIFO yet, for what needs one (Describe, SpliceTo).
	ErrPending = errors.New("no fifo served yet")

	// ErrReplaced is returned when the entry a FIFO was opened from no
	// longer names that FIFO (it was replaced, moved or removed).
	ErrReplaced = errors.New("replaced")
)
