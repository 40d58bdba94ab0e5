package fifo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Check reports whether path is an existing FIFO. It does not follow a final
// symbolic link: a link to a FIFO is not a FIFO.
func Check(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("check fifo %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeNamedPipe {
		return fmt.Errorf("check fifo %s: %w (%s)", path, ErrNotFIFO, describe(fi.Mode()))
	}
	return nil
}

// Make creates a FIFO at path with mode perm (not masked by the umask) unless
// one is already there. created says whether this call made it. An existing
// non-FIFO at path is left untouched and reported as ErrNotFIFO.
func Make(path string, perm os.FileMode) (created bool, err error) {
	err = unix.Mkfifo(path, uint32(perm.Perm()))
	if errors.Is(err, unix.EEXIST) {
		return false, Check(path)
	}
	if err != nil {
		return false, fmt.Errorf("make fifo %s: %w", path, err)
	}
	// mkfifo applies the umask; set the mode the caller asked for.
	if err := os.Chmod(path, perm.Perm()); err != nil {
		os.Remove(path)
		return false, fmt.Errorf("make fifo %s: %w", path, err)
	}
	return true, nil
}

func describe(m fs.FileMode) string {
	switch m.Type() {
	case 0:
		return "regular file"
	case fs.ModeDir:
		return "directory"
	case fs.ModeSymlink:
		return "symbolic link"
	case fs.ModeSocket:
		return "socket"
	case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		return "device"
	}
	return m.Type().String()
}
