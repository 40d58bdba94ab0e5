package sharedir

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Kind is what an entry of a unit is.
type Kind int

const (
	FIFO Kind = iota + 1 // a named pipe
	File                 // a regular file, made empty
)

// Entry is one file of a unit: its name, what it is and, where MakeUnit
// makes it, its mode.
type Entry struct {
	Name string
	Kind Kind
	Perm os.FileMode
}

// Layout is every entry a kind of unit may hold, by name and kind:
// MakeUnit makes some of them and empties a directory it reuses of all
// of them; Remove removes all of them, and nothing else.
type Layout []Entry

// Unit is a directory made whole, with its files, in one call (MakeUnit)
// and removed whole in one call (Remove), through descriptors: a
// session's DIR/sessions/NAME. Its Dir holds no descriptor while nothing
// is done in it (see Dir): it is reached through the directory it was
// made in, which must be one that only its user can change (DIR/sessions
// is the agent's), and only while it is the directory made.
type Unit struct {
	dir    *Dir
	layout Layout
}

// Dir is the unit's directory, for the operations on its entries.
func (u *Unit) Dir() *Dir { return u.dir }

// MakeUnit makes the subdirectory name of d holding the entries made (each
// one of l), all in one call, and gives it mode perm (its setgid bit
// included) once they are there. The directory is made private (0700),
// and each entry is made private and given its mode with a chmod of its
// own descriptor, whatever the umask: nobody but the caller's user can
// enter it until it is whole. An existing directory of the caller's own
// user there is reused, made private again and emptied of l's entries
// first (a leftover of an earlier run); anything else there (a symbolic
// link: ErrSymlink, a file, another user's directory) is refused and
// left as it is. On failure, the layout's entries and the directory are
// removed again (a directory that holds anything else stays).
func (d *Dir) MakeUnit(name string, perm os.FileMode, l Layout, made []Entry) (*Unit, error) {
	for _, e := range made {
		if !l.holds(e) {
			return nil, fmt.Errorf("make %s: %s is not in its layout", d.Join(name), e.Name)
		}
	}
	sub, fresh, err := d.makeOwn(name)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	u, err := sub.fill(d, name, perm, l, made, fresh)
	if err != nil {
		sub.clear(l)
		d.RemoveDir(name) // the caller's own, and empty unless something else is in it
		return nil, err
	}
	return u, nil
}

// fill is MakeUnit's work in sub, the directory name of d, which fresh
// says was made now.
func (sub *Dir) fill(d *Dir, name string, perm os.FileMode, l Layout, made []Entry, fresh bool) (*Unit, error) {
	if !fresh {
		if err := sub.Chmod(0o700); err != nil {
			return nil, err
		}
		if err := sub.clear(l); err != nil {
			return nil, err
		}
	}
	for _, e := range made {
		var err error
		if e.Kind == FIFO {
			err = sub.MakeFIFO(e.Name, e.Perm)
		} else {
			err = sub.makeFile(e.Name, e.Perm)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := sub.Chmod(perm); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(sub.Fd(), &st); err != nil {
		return nil, fmt.Errorf("make %s: %w", sub.path, err)
	}
	unit := &Dir{path: sub.path, at: d, name: name, dev: uint64(st.Dev), ino: uint64(st.Ino)} // st.Dev is a uint32 on mips
	return &Unit{dir: unit, layout: l}, nil
}

// Remove removes the unit's entries (those of its layout, each only if it
// is of its kind) and then its directory, in one call, through the
// directory it was made in. What is not the unit's stays, and so does
// the directory then (the error says why). A directory that is no longer
// the one made is not touched (ErrMoved).
func (u *Unit) Remove() error {
	err := u.dir.pinned(func(p *Dir) error { return p.clear(u.layout) })
	if err != nil {
		return err
	}
	return u.dir.at.RemoveDir(u.dir.name)
}

// RemoveUnit removes the directory name of d as Unit.Remove does, where no
// Unit is at hand: a leftover of an earlier run. Only a real directory of
// the caller's own user is emptied of l's entries and removed; anything
// else is refused and left.
func (d *Dir) RemoveUnit(name string, l Layout) error {
	sub, err := d.OpenSub(name)
	if err != nil {
		return err
	}
	defer sub.Close()
	var st unix.Stat_t
	if err := unix.Fstat(sub.Fd(), &st); err != nil {
		return fmt.Errorf("remove %s: %w", sub.path, err)
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("remove %s: it belongs to uid %d, not to the agent", sub.path, st.Uid)
	}
	if err := sub.clear(l); err != nil {
		return err
	}
	return d.RemoveDir(name)
}

// holds reports whether e is one of l's entries.
func (l Layout) holds(e Entry) bool {
	for _, x := range l {
		if x.Name == e.Name && x.Kind == e.Kind {
			return true
		}
	}
	return false
}

// clear removes the entries of l that d holds, each only while it is of
// its kind (a FIFO, a regular file); it returns the first failure, after
// trying them all.
func (d *Dir) clear(l Layout) error {
	var first error
	for _, e := range l {
		st, err := d.Stat(e.Name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil && !e.Kind.is(st.Mode) {
			err = fmt.Errorf("remove %s: %w", d.Join(e.Name), ErrOtherKind)
		}
		if err == nil {
			err = d.Remove(e.Name)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// is reports whether st_mode mode is of kind k.
func (k Kind) is(mode uint32) bool {
	switch k {
	case FIFO:
		return mode&unix.S_IFMT == unix.S_IFIFO
	case File:
		return mode&unix.S_IFMT == unix.S_IFREG
	}
	return false
}

// makeFile makes the empty regular file name of d, which must not exist
// yet, and gives it mode perm with fchmod on its descriptor.
func (d *Dir) makeFile(name string, perm os.FileMode) error {
	f, err := d.Create(name, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chmod(perm); err != nil {
		d.Remove(name)
		return fmt.Errorf("chmod %s: %w", d.Join(name), err)
	}
	return nil
}

// MakeFIFO makes the FIFO name in d with mode perm, not masked by the
// umask: it is made private (0600), opened with O_PATH (no link
// followed) and checked to be a FIFO of the caller's own user, and given
// perm with a chmod of that descriptor, so that an entry swapped in
// between is never changed: it is reported, and left. An entry already
// there is left as it is, and the error wraps os.ErrExist.
func (d *Dir) MakeFIFO(name string, perm os.FileMode) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("make fifo: %w", err)
	}
	err := d.Use(func(fd int) error { return unix.Mkfifoat(fd, name, 0o600) })
	if err != nil {
		return &os.PathError{Op: "make fifo", Path: d.Join(name), Err: err}
	}
	fd, err := d.Openat(name, unix.O_PATH, 0)
	if err != nil {
		return fmt.Errorf("make fifo %s: replaced while being made: %w", d.Join(name), err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("make fifo %s: %w", d.Join(name), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFIFO || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("make fifo %s: %w", d.Join(name), ErrSwapped)
	}
	if err := chmodFd(fd, perm); err != nil {
		d.Remove(name)
		return fmt.Errorf("make fifo %s: %w", d.Join(name), err)
	}
	return nil
}

// chmodFd sets the mode of the inode the O_PATH descriptor fd pins:
// fchmodat2 with AT_EMPTY_PATH where the kernel has it (6.6+), else chmod
// of its /proc/self/fd magic link, which reaches that inode and nothing
// else.
func chmodFd(fd int, perm os.FileMode) error {
	err := unix.Fchmodat(fd, "", UnixMode(perm), unix.AT_EMPTY_PATH)
	if err == unix.ENOSYS || err == unix.EOPNOTSUPP || err == unix.EINVAL {
		err = unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), UnixMode(perm))
	}
	return err
}

// pinned calls fn with d as a Dir that holds a descriptor during the
// call: d itself, or for a unit's Dir one opened once for all that fn
// does (reach), and closed after it.
func (d *Dir) pinned(fn func(p *Dir) error) error {
	if d.f != nil {
		return fn(d)
	}
	fd, err := d.reach()
	if err != nil {
		return err
	}
	p := &Dir{f: os.NewFile(uintptr(fd), d.path), path: d.path}
	defer p.Close()
	return fn(p)
}

// reach opens a unit's directory for one operation: the entry name of the
// Dir it was made in, with no link followed, and only while it is the
// directory made (ErrMoved otherwise).
func (d *Dir) reach() (int, error) {
	fd, err := d.at.Openat(d.name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if errors.Is(err, unix.ENOTDIR) {
		// O_DIRECTORY|O_NOFOLLOW refuses a link so: name it.
		if st, serr := d.at.Stat(d.name); serr == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			err = ErrSymlink
		}
	}
	if err != nil {
		return -1, fmt.Errorf("open directory %s: %w", d.path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("open directory %s: %w", d.path, err)
	}
	if uint64(st.Dev) != d.dev || uint64(st.Ino) != d.ino { // st.Dev is a uint32 on mips
		unix.Close(fd)
		return -1, fmt.Errorf("open directory %s: %w", d.path, ErrMoved)
	}
	return fd, nil
}
