package fifo

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// OpenWriterNow opens the FIFO at path for writing without waiting. It
// returns ErrNoReader when no process has it open for reading.
func OpenWriterNow(path string) (*os.File, error) {
	f, err := open(path, unix.O_WRONLY|unix.O_NONBLOCK)
	if errors.Is(err, unix.ENXIO) {
		return nil, fmt.Errorf("open fifo %s: %w", path, ErrNoReader)
	}
	return f, err
}

// OpenReaderNow opens the FIFO at path for reading without waiting for a
// writer. Until a writer has opened it, Read returns io.EOF.
func OpenReaderNow(path string) (*os.File, error) {
	return open(path, unix.O_RDONLY|unix.O_NONBLOCK)
}

// open opens the FIFO at path with flag, which must not block.
func open(path string, flag int) (*os.File, error) {
	h, err := pin(path)
	if err != nil {
		return nil, err
	}
	defer h.close()
	fd, err := h.reopen(flag)
	if err != nil {
		return nil, fmt.Errorf("open fifo %s: %w", path, err)
	}
	return file(fd, path)
}

// handle pins the inode at a path with an O_PATH descriptor, checked to be a
// FIFO, so that every later open reaches that very inode: no final symbolic
// link is followed and a path swapped in the meantime is not opened.
type handle struct {
	path string
	fd   int
}

func pin(path string) (handle, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return handle{}, fmt.Errorf("open fifo %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return handle{}, fmt.Errorf("open fifo %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFIFO {
		unix.Close(fd)
		return handle{}, fmt.Errorf("open fifo %s: %w (%s)", path, ErrNotFIFO, describe(fileType(st.Mode)))
	}
	return handle{path: path, fd: fd}, nil
}

func (h handle) reopen(flag int) (int, error) {
	// Opening the magic link of an O_PATH descriptor opens its inode again.
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(h.fd), flag|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		// No /proc: fall back to the path, still refusing a final link.
		fd, err = unix.Open(h.path, flag|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	}
	return fd, err
}

func (h handle) close() { unix.Close(h.fd) }

// file wraps fd, switching it to non-blocking so the runtime poller serves it.
func file(fd int, path string) (*os.File, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("open fifo %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

func fileType(mode uint32) os.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return os.ModeDir
	case unix.S_IFLNK:
		return os.ModeSymlink
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	}
	return 0
}
