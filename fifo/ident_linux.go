package fifo

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/sharedir"
)

// ID identifies a FIFO over time: the device and inode numbers of its
// file system, and its birth time (nanoseconds since the epoch) where the
// file system keeps one, else 0. An inode number alone is given to a new
// file once the FIFO that had it is gone; the birth time tells them apart.
type ID struct {
	Dev, Ino uint64
	Btime    int64
}

// Same says whether a and b are one FIFO: the same inode number, and
// the same birth time where both know one. The device numbers are not
// compared: two views of one file system (a container's mount and the
// host's) may show different ones, and a FIFO of one directory is on its
// file system (rename and link stay within one).
func (a ID) Same(b ID) bool {
	return a.Ino == b.Ino && (a.Btime == 0 || b.Btime == 0 || a.Btime == b.Btime)
}

// Info describes a FIFO, from its descriptor.
type Info struct {
	ID
	Uid   uint32 // its owner
	Gid   uint32 // its group
	Mode  uint32 // its type and permission bits, as st_mode
	Nlink uint32 // its names: 0 when none is left
}

// OthersMayRead is OthersMayRead of the FIFO i describes.
func (i Info) OthersMayRead(uid int) bool {
	return OthersMayRead(&unix.Stat_t{Uid: i.Uid, Mode: i.Mode}, uid)
}

// Describe describes the open file f with statx(2) on its descriptor.
func Describe(f *os.File) (Info, error) {
	rc, err := f.SyscallConn() // not Fd(): that would make f blocking
	if err != nil {
		return Info{}, err
	}
	var stx unix.Statx_t
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		serr = unix.Statx(int(fd), "", unix.AT_EMPTY_PATH, unix.STATX_BASIC_STATS|unix.STATX_BTIME, &stx)
	})
	if err := errors.Join(cerr, serr); err != nil {
		return Info{}, &os.PathError{Op: "statx", Path: f.Name(), Err: err}
	}
	return Info{ID: idOf(&stx), Uid: stx.Uid, Gid: stx.Gid, Mode: uint32(stx.Mode), Nlink: stx.Nlink}, nil
}

// IdentifyAt identifies the FIFO name of d (statx relative to d's
// descriptor, not following a link); anything but a FIFO is ErrNotFIFO.
func IdentifyAt(d *sharedir.Dir, name string) (ID, error) {
	if err := sharedir.CheckName(name); err != nil {
		return ID{}, err
	}
	var stx unix.Statx_t
	err := d.Use(func(fd int) error {
		return unix.Statx(fd, name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS|unix.STATX_BTIME, &stx)
	})
	if err != nil {
		return ID{}, &os.PathError{Op: "statx", Path: d.Join(name), Err: err}
	}
	if uint32(stx.Mode)&unix.S_IFMT != unix.S_IFIFO {
		return ID{}, fmt.Errorf("%s: %w (%s)", d.Join(name), ErrNotFIFO, describe(fileType(uint32(stx.Mode))))
	}
	return idOf(&stx), nil
}

// RemoveSameAt removes the entry name of d if it is still the FIFO id
// identifies (unlinkat: only that entry), and reports whether it did:
// a FIFO someone else put in its place is theirs, and stays.
func RemoveSameAt(d *sharedir.Dir, name string, id ID) (bool, error) {
	now, err := IdentifyAt(d, name)
	if err != nil || !now.Same(id) {
		return false, err
	}
	return true, d.Remove(name)
}

func idOf(stx *unix.Statx_t) ID {
	id := ID{Dev: unix.Mkdev(stx.Dev_major, stx.Dev_minor), Ino: stx.Ino}
	if stx.Mask&unix.STATX_BTIME != 0 {
		id.Btime = stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
	}
	return id
}
