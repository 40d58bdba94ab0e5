package fifo

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/fifobridge/fifobridge/sharedir"
	"golang.org/x/sys/unix"
)

// pin opens the entry name of d as an O_PATH descriptor checked to be a
// FIFO, so that every later open reaches that very inode.
func pin(d *sharedir.Dir, name string) (handle, error) {
	fd, err := d.Openat(name, unix.O_PATH, 0)
	if err != nil {
		return handle{}, fmt.Errorf("open fifo %s: %w", d.Join(name), err)
	}
	h := handle{dir: d, name: name, fd: fd}
	if err := unix.Fstat(fd, &h.st); err != nil {
		unix.Close(fd)
		return handle{}, fmt.Errorf("open fifo %s: %w", d.Join(name), err)
	}
	if h.st.Mode&unix.S_IFMT != unix.S_IFIFO {
		unix.Close(fd)
		return handle{}, fmt.Errorf("open fifo %s: %w (%s)", d.Join(name), ErrNotFIFO, describe(fileType(h.st.Mode)))
	}
	return h, nil
}

// handle is a FIFO pinned by an O_PATH descriptor.
type handle struct {
	dir  *sharedir.Dir
	name string
	fd   int
	st   unix.Stat_t
}

// reopen opens the pinned inode with flag (which gets O_CLOEXEC).
func (h handle) reopen(flag int) (int, error) {
	// Opening the magic link of an O_PATH descriptor opens its inode again.
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(h.fd), flag|unix.O_CLOEXEC, 0)
	if !errors.Is(err, unix.ENOENT) {
		return fd, err
	}
	// No /proc: open the name again, still through the directory, and
	// make sure it is the same inode.
	if fd, err = h.dir.Openat(h.name, flag, 0); err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || !sameFile(&st, &h.st) {
		unix.Close(fd)
		return -1, ErrReplaced
	}
	return fd, nil
}

func (h handle) close() { unix.Close(h.fd) }

func sameFile(a, b *unix.Stat_t) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

// CheckAt reports whether the entry name of d is a FIFO; a symbolic link, even
// to a FIFO, is not one.
func CheckAt(d *sharedir.Dir, name string) error {
	st, err := d.Stat(name)
	if err != nil {
		return fmt.Errorf("check fifo %s: %w", d.Join(name), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return fmt.Errorf("check fifo %s: %w (%s)", d.Join(name), ErrNotFIFO, describe(fileType(st.Mode)))
	}
	return nil
}

// MakeAt creates the FIFO name in d with mode perm (not masked by the umask)
// unless one is already there; created says whether this call made it. The
// mode is set with a chmod of the new FIFO's own descriptor, so an entry
// swapped in between (a link to a file elsewhere) is never changed: it is
// reported, and left alone (sharedir.Dir.MakeFIFO). An existing non-FIFO
// is left untouched and reported as ErrNotFIFO.
func MakeAt(d *sharedir.Dir, name string, perm os.FileMode) (created bool, err error) {
	err = d.MakeFIFO(name, perm)
	if errors.Is(err, os.ErrExist) {
		return false, CheckAt(d, name)
	}
	if errors.Is(err, sharedir.ErrSwapped) {
		err = fmt.Errorf("%w (%w)", err, ErrReplaced)
	}
	return err == nil, err
}

// RemoveAt removes the entry name of d if it is a FIFO (unlinkat: only
// that entry, nothing a link points to).
func RemoveAt(d *sharedir.Dir, name string) error {
	if err := CheckAt(d, name); err != nil {
		return err
	}
	return d.Remove(name)
}
