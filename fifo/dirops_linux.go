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

// chmod sets the pinned inode's mode: fchmodat2 on the descriptor where
// the kernel has it (6.6+), else chmod of its /proc/self/fd magic link,
// which reaches the inode and nothing else.
func (h handle) chmod(perm os.FileMode) error {
	err := unix.Fchmodat(h.fd, "", sharedir.UnixMode(perm), unix.AT_EMPTY_PATH)
	if err == unix.ENOSYS || err == unix.EOPNOTSUPP || err == unix.EINVAL {
		err = unix.Chmod("/proc/self/fd/"+strconv.Itoa(h.fd), sharedir.UnixMode(perm))
	}
	return err
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
// reported, and left alone. An existing non-FIFO is left untouched and
// reported as ErrNotFIFO.
func MakeAt(d *sharedir.Dir, name string, perm os.FileMode) (created bool, err error) {
	if err := sharedir.CheckName(name); err != nil {
		return false, fmt.Errorf("make fifo: %w", err)
	}
	err = unix.Mkfifoat(d.Fd(), name, 0o600)
	if errors.Is(err, unix.EEXIST) {
		return false, CheckAt(d, name)
	}
	if err != nil {
		return false, fmt.Errorf("make fifo %s: %w", d.Join(name), err)
	}
	h, err := pin(d, name)
	if err != nil {
		return false, fmt.Errorf("make fifo %s: replaced while being made: %w", d.Join(name), err)
	}
	defer h.close()
	if int(h.st.Uid) != os.Geteuid() {
		return false, fmt.Errorf("make fifo %s: replaced while being made: %w", d.Join(name), ErrReplaced)
	}
	if err := h.chmod(perm); err != nil {
		RemoveAt(d, name)
		return false, fmt.Errorf("make fifo %s: %w", d.Join(name), err)
	}
	return true, nil
}

// RemoveAt removes the entry name of d if it is a FIFO (unlinkat: only
// that entry, nothing a link points to).
func RemoveAt(d *sharedir.Dir, name string) error {
	if err := CheckAt(d, name); err != nil {
		return err
	}
	return d.Remove(name)
}
