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

	// ErrSymlink is returned where a symbolic link is found that is not
	// followed: inside a Dir, or in a directory others can write.
	ErrSymlink = errors.New("symbolic link refused")

	// ErrBadName is returned for a name inside a Dir that is not a plain
	// name: empty, ".", "..", or containing "/".
	ErrBadName = errors.New("not a plain name")

	// ErrReplaced is returned when the entry a FIFO was opened from no
	// longer names that FIFO (it was replaced, moved or removed).
	ErrReplaced = errors.New("replaced")
)
