package fifo

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2(2) turned out to be missing (before Linux
// 5.6, or refused by a seccomp filter); openat with O_NOFOLLOW is used then.
var noOpenat2 atomic.Bool

// openat opens the entry name of d with flag, never following a symbolic
// link: openat2 with RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH where the kernel
// has it, openat with O_NOFOLLOW otherwise (name is one component, so that
// is the only link there could be). With O_PATH a final link is opened as
// the link itself; callers check the type of what they got.
func (d *Dir) openat(name string, flag int, mode uint32) (int, error) {
	if err := checkName(name); err != nil {
		return -1, err
	}
	flag |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	if !noOpenat2.Load() {
		how := unix.OpenHow{Flags: uint64(flag), Mode: uint64(mode),
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH}
		fd, err := unix.Openat2(d.Fd(), name, &how)
		for err == unix.EINTR {
			fd, err = unix.Openat2(d.Fd(), name, &how)
		}
		switch err {
		case unix.ENOSYS:
			noOpenat2.Store(true)
		case unix.EPERM: // maybe a seccomp filter: try openat
		default:
			return fd, symlinkErr(err)
		}
	}
	for {
		fd, err := unix.Openat(d.Fd(), name, flag, mode)
		if err != unix.EINTR {
			return fd, symlinkErr(err)
		}
	}
}

// symlinkErr names ELOOP, which a final symbolic link gives with
// O_NOFOLLOW, as ErrSymlink.
func symlinkErr(err error) error {
	if err == unix.ELOOP {
		return fmt.Errorf("%w (%w)", ErrSymlink, err)
	}
	return err
}

// pin opens the entry name of d as an O_PATH descriptor checked to be a
// FIFO, so that every later open reaches that very inode.
func (d *Dir) pin(name string) (handle, error) {
	fd, err := d.openat(name, unix.O_PATH, 0)
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
	dir  *Dir
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
	if fd, err = h.dir.openat(h.name, flag, 0); err != nil {
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
	err := unix.Fchmodat(h.fd, "", unixMode(perm), unix.AT_EMPTY_PATH)
	if err == unix.ENOSYS || err == unix.EOPNOTSUPP || err == unix.EINVAL {
		err = unix.Chmod("/proc/self/fd/"+strconv.Itoa(h.fd), unixMode(perm))
	}
	return err
}

func (h handle) close() { unix.Close(h.fd) }

func sameFile(a, b *unix.Stat_t) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

// Check reports whether the entry name of d is a FIFO; a symbolic link, even
// to a FIFO, is not one.
func (d *Dir) Check(name string) error {
	st, err := d.Stat(name)
	if err != nil {
		return fmt.Errorf("check fifo %s: %w", d.Join(name), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return fmt.Errorf("check fifo %s: %w (%s)", d.Join(name), ErrNotFIFO, describe(fileType(st.Mode)))
	}
	return nil
}

// Make creates the FIFO name in d with mode perm (not masked by the umask)
// unless one is already there; created says whether this call made it. The
// mode is set with a chmod of the new FIFO's own descriptor, so an entry
// swapped in between (a link to a file elsewhere) is never changed: it is
// reported, and left alone. An existing non-FIFO is left untouched and
// reported as ErrNotFIFO.
func (d *Dir) Make(name string, perm os.FileMode) (created bool, err error) {
	if err := checkName(name); err != nil {
		return false, fmt.Errorf("make fifo: %w", err)
	}
	err = unix.Mkfifoat(d.Fd(), name, 0o600)
	if errors.Is(err, unix.EEXIST) {
		return false, d.Check(name)
	}
	if err != nil {
		return false, fmt.Errorf("make fifo %s: %w", d.Join(name), err)
	}
	h, err := d.pin(name)
	if err != nil {
		return false, fmt.Errorf("make fifo %s: replaced while being made: %w", d.Join(name), err)
	}
	defer h.close()
	if int(h.st.Uid) != os.Geteuid() {
		return false, fmt.Errorf("make fifo %s: replaced while being made: %w", d.Join(name), ErrReplaced)
	}
	if err := h.chmod(perm); err != nil {
		d.RemoveFIFO(name)
		return false, fmt.Errorf("make fifo %s: %w", d.Join(name), err)
	}
	return true, nil
}

// RemoveFIFO removes the entry name of d if it is a FIFO (unlinkat: only
// that entry, nothing a link points to).
func (d *Dir) RemoveFIFO(name string) error {
	if err := d.Check(name); err != nil {
		return err
	}
	return d.Remove(name)
}

// Remove removes the entry name of d (not a directory).
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Unlinkat(d.Fd(), name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: d.Join(name), Err: err}
	}
	return nil
}

// Rename replaces the entry to of d with its entry from, atomically
// (renameat: a link at to is replaced, not followed).
func (d *Dir) Rename(from, to string) error {
	if err := checkName(from); err != nil {
		return err
	}
	if err := checkName(to); err != nil {
		return err
	}
	if err := unix.Renameat(d.Fd(), from, d.Fd(), to); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(from), New: d.Join(to), Err: err}
	}
	return nil
}

// Create makes the regular file name of d, which must not exist yet, with
// mode perm less the umask, and opens it write-only, never following a
// link.
func (d *Dir) Create(name string, perm os.FileMode) (*os.File, error) {
	fd, err := d.openat(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, unixMode(perm))
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: d.Join(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}

// OpenFile opens the entry name of d as a regular file with flag (O_CREAT
// makes it with mode perm, less the umask), never following a link.
// Anything but a regular file is refused; O_NONBLOCK is added so that a
// FIFO in its place cannot block the open.
func (d *Dir) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := d.openat(name, flag|unix.O_NONBLOCK, unixMode(perm))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: d.Join(name), Err: errors.New("not a regular file")}
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}
