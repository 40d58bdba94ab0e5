package sharedir

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2(2) turned out to be missing (before Linux
// 5.6, or refused by a seccomp filter); openat with O_NOFOLLOW is used then.
var noOpenat2 atomic.Bool

// Openat opens the entry name of d with flag (O_CLOEXEC is added) and
// returns its descriptor, never following a symbolic
// link: openat2 with RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH where the kernel
// has it, openat with O_NOFOLLOW otherwise (name is one component, so that
// is the only link there could be). With O_PATH a final link is opened as
// the link itself; callers check the type of what they got.
func (d *Dir) Openat(name string, flag int, mode uint32) (int, error) {
	if err := CheckName(name); err != nil {
		return -1, err
	}
	fd := -1
	err := d.Use(func(dirfd int) (err error) {
		fd, err = openat(dirfd, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
		return err
	})
	return fd, err
}

// openat is Openat on the directory dirfd.
func openat(dirfd int, name string, flag int, mode uint32) (int, error) {
	if !noOpenat2.Load() {
		how := unix.OpenHow{Flags: uint64(flag), Mode: uint64(mode),
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH}
		fd, err := unix.Openat2(dirfd, name, &how)
		for err == unix.EINTR {
			fd, err = unix.Openat2(dirfd, name, &how)
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
		fd, err := unix.Openat(dirfd, name, flag, mode)
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

// Remove removes the entry name of d (not a directory).
func (d *Dir) Remove(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return d.Use(func(fd int) error {
		if err := unix.Unlinkat(fd, name, 0); err != nil {
			return &os.PathError{Op: "remove", Path: d.Join(name), Err: err}
		}
		return nil
	})
}

// RemoveDir removes the empty directory name of d (unlinkat with
// AT_REMOVEDIR: a link there is not followed, and is refused).
func (d *Dir) RemoveDir(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return d.Use(func(fd int) error {
		if err := unix.Unlinkat(fd, name, unix.AT_REMOVEDIR); err != nil {
			return &os.PathError{Op: "remove", Path: d.Join(name), Err: err}
		}
		return nil
	})
}

// Rename replaces the entry to of d with its entry from, atomically
// (renameat: a link at to is replaced, not followed).
func (d *Dir) Rename(from, to string) error {
	if err := CheckName(from); err != nil {
		return err
	}
	if err := CheckName(to); err != nil {
		return err
	}
	return d.Use(func(fd int) error {
		if err := unix.Renameat(fd, from, fd, to); err != nil {
			return &os.LinkError{Op: "rename", Old: d.Join(from), New: d.Join(to), Err: err}
		}
		return nil
	})
}

// Create makes the regular file name of d, which must not exist yet, with
// mode perm less the umask, and opens it write-only, never following a
// link.
func (d *Dir) Create(name string, perm os.FileMode) (*os.File, error) {
	fd, err := d.Openat(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, UnixMode(perm))
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
	fd, err := d.Openat(name, flag|unix.O_NONBLOCK, UnixMode(perm))
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
