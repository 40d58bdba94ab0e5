package fifo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fifobridge/fifobridge/sharedir"
	"golang.org/x/sys/unix"
)

// OpenWriterNow opens the FIFO at path for writing without waiting. It
// returns ErrNoReader when no process has it open for reading.
func OpenWriterNow(path string) (*os.File, error) {
	return inParent(path, OpenWriterNowAt)
}

// inParent runs op on the directory of path, entered for the call (see
// sharedir.Enter: it need not be readable), and the path's last component.
func inParent(path string, op func(d *sharedir.Dir, name string) (*os.File, error)) (*os.File, error) {
	d, err := sharedir.Enter(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("open fifo %s: %w", path, err)
	}
	defer d.Close()
	return op(d, filepath.Base(path))
}

// OpenWriterNowAt opens the FIFO name of d for writing without waiting. It
// returns ErrNoReader when no process has it open for reading.
func OpenWriterNowAt(d *sharedir.Dir, name string) (*os.File, error) {
	f, err := openAt(d, name, unix.O_WRONLY|unix.O_NONBLOCK)
	if errors.Is(err, unix.ENXIO) {
		return nil, fmt.Errorf("open fifo %s: %w", d.Join(name), ErrNoReader)
	}
	return f, err
}

// OpenReaderNowAt opens the FIFO name of d for reading without waiting for a
// writer. Until a writer has opened it, Read returns io.EOF.
func OpenReaderNowAt(d *sharedir.Dir, name string) (*os.File, error) {
	return openAt(d, name, unix.O_RDONLY|unix.O_NONBLOCK)
}

// openAt opens the FIFO name of d with flag, which must not block.
func openAt(d *sharedir.Dir, name string, flag int) (*os.File, error) {
	h, err := pin(d, name)
	if err != nil {
		return nil, err
	}
	defer h.close()
	fd, err := h.reopen(flag)
	if err != nil {
		return nil, fmt.Errorf("open fifo %s: %w", d.Join(name), err)
	}
	return file(fd, d.Join(name))
}

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
