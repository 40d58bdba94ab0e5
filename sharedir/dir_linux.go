package sharedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is a directory opened once. Every operation on an entry of it goes
// through its descriptor, takes a plain name (one path component, no "/",
// not "." or "..") and never follows a symbolic link, so whoever else can
// write the directory cannot make an operation act outside it.
//
// The Dir of a Unit (MakeUnit) holds no descriptor: each operation opens
// it for its own time through the Dir it was made in, as an entry there
// (no link followed), and goes on only if that is still the directory
// made (device and inode), else fails with ErrMoved. See Unit.
type Dir struct {
	f    *os.File // O_RDONLY|O_DIRECTORY, or O_PATH|O_DIRECTORY (Enter); nil for a unit's
	path string   // for messages and Join; never used to reach the directory

	// A unit's: its entry name in the Dir at, and what it is.
	at       *Dir
	name     string
	dev, ino uint64
}

// maxLinks bounds the symbolic links followed while resolving a path, as
// the kernel's own limit (40) does.
const maxLinks = 40

// Open opens the directory at path, resolving the path once, now. The
// path is walked from "/" one component at a time, each opened relative to
// the one before with O_NOFOLLOW. A symbolic link on the way is followed
// only when the directory that holds it can be written by no one but root
// and the calling user (its owner is one of them and it has no group or
// other write bit): such a link is as trusted as the path it is part of,
// so /var/run -> /run works. A link in a directory that others can write
// (/tmp, a shared volume, DIR itself) is refused with ErrSymlink, and so is
// the directory itself being a link there. With create, missing directories
// are made (mode 0755, less the umask) with mkdirat relative to their
// opened parent.
func Open(path string, create bool) (*Dir, error) {
	var mk *making
	if create {
		mk = &making{}
	}
	return openDir(path, mk, unix.O_RDONLY)
}

// Enter opens the directory at path as Open does, but needs only
// permission to enter it (search, x), not to list it (read): its
// descriptor is O_PATH. Everything a client does with entries it knows by
// name works through it (opening, making and removing FIFOs, reading
// files); listing it and changing its own mode (Chmod) do not. It is how
// host-side commands reach DIR and DIR/replies (mode 1733, which only its
// owner can list).
func Enter(path string) (*Dir, error) {
	return openDir(path, nil, unix.O_PATH)
}

// Make is Open with create, except that the directory itself, when
// it is made here, is made private (0700) and then given mode perm with
// fchmod on its descriptor, whatever the umask: nobody else can enter it
// in between. made reports whether it was made here.
func Make(path string, perm os.FileMode) (d *Dir, made bool, err error) {
	mk := &making{leafPerm: perm, leafSet: true}
	d, err = openDir(path, mk, unix.O_RDONLY)
	return d, mk.leafMade, err
}

// making says how Open makes missing directories.
type making struct {
	leafSet  bool        // the last component, when made here, gets leafPerm
	leafPerm os.FileMode // its mode then
	leafMade bool        // set when the last component was made here
}

func openDir(path string, mk *making, flag int) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open directory %s: %w", path, err)
	}
	fd, err := resolveDir(abs, mk, flag)
	if err != nil {
		return nil, fmt.Errorf("open directory %s: %w", path, err)
	}
	if mk != nil && mk.leafMade {
		if err := unix.Fchmod(fd, UnixMode(mk.leafPerm)); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("chmod %s: %w", abs, err)
		}
	}
	return &Dir{f: os.NewFile(uintptr(fd), abs), path: abs}, nil
}

// resolveDir is Open's walk; it returns the directory opened with
// flag|O_DIRECTORY. With mk nil, nothing is made.
func resolveDir(abs string, mk *making, flag int) (int, error) {
	links := 0
	for {
		fd, rest, target, err := walk(abs, mk, flag)
		if err != nil || target == "" {
			return fd, err
		}
		if links++; links > maxLinks {
			return -1, unix.ELOOP
		}
		// rest is the part of the path past the link: the walk starts
		// again from "/" on the link's target. Everything before the link
		// is a real directory, so ".." in the target is resolved lexically.
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(rest), target)
		}
		abs = filepath.Join(target, strings.TrimPrefix(abs, rest))
	}
}

// walk walks abs from "/". It returns the directory opened with
// flag|O_DIRECTORY, or, when it meets a trusted symbolic link, the path up
// to and including the link and the link's target.
func walk(abs string, mk *making, flag int) (fd int, upTo, target string, err error) {
	cur, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", "", err
	}
	defer func() { unix.Close(cur) }()
	done := "/"
	names := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	for i, name := range names {
		if name == "" {
			continue
		}
		here := filepath.Join(done, name)
		next, target, err := step(cur, name, here, mk, i == len(names)-1)
		if err != nil {
			return -1, "", "", err
		}
		if target != "" {
			return -1, here, target, nil
		}
		unix.Close(cur)
		cur, done = next, here
	}
	fd, err = unix.Openat(cur, ".", flag|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return fd, "", "", err
}

// step opens the entry name of the directory cur as an O_PATH directory, or
// returns the target of a trusted symbolic link there. leaf says that name
// is the last component of the path.
func step(cur int, name, here string, mk *making, leaf bool) (next int, target string, err error) {
	for {
		var st unix.Stat_t
		err := unix.Fstatat(cur, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case errors.Is(err, unix.ENOENT) && mk != nil:
			mode := uint32(0o755)
			if leaf && mk.leafSet {
				mode = 0o700 // private until openDir gives it leafPerm
			}
			err := unix.Mkdirat(cur, name, mode)
			if err != nil && !errors.Is(err, unix.EEXIST) {
				return -1, "", fmt.Errorf("make %s: %w", here, err)
			}
			if err == nil && leaf && mk.leafSet {
				mk.leafMade = true
			}
			continue // look again: someone may have been faster
		case err != nil:
			return -1, "", fmt.Errorf("%s: %w", here, err)
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			if !onlyTrustedWrite(cur) {
				return -1, "", fmt.Errorf("%s: %w in a directory others can write", here, ErrSymlink)
			}
			buf := make([]byte, unix.PathMax)
			n, err := unix.Readlinkat(cur, name, buf)
			if err != nil {
				return -1, "", fmt.Errorf("%s: %w", here, err)
			}
			return -1, string(buf[:n]), nil
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return -1, "", fmt.Errorf("%s: %w", here, unix.ENOTDIR)
		}
		next, err := unix.Openat(cur, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			// Replaced by a link (ELOOP, ENOTDIR) since the look: refused.
			return -1, "", fmt.Errorf("%s: %w", here, err)
		}
		return next, "", nil
	}
}

// onlyTrustedWrite reports whether only root and the calling user can
// change the entries of the directory fd.
func onlyTrustedWrite(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	owner := st.Uid == 0 || int(st.Uid) == os.Geteuid()
	return owner && st.Mode&0o022 == 0
}

// Path returns the directory's absolute path as it was resolved, for
// messages.
func (d *Dir) Path() string { return d.path }

// Join returns the path of the entry name, for messages.
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

// Fd returns the directory's descriptor; it stays valid until Close. A
// unit's Dir holds none: its Fd is -1, and Use gives one for a call.
func (d *Dir) Fd() int {
	if d.f == nil {
		return -1
	}
	return int(d.f.Fd())
}

// Use calls fn with a descriptor of the directory, valid during the call:
// its own, or for a unit's Dir one opened for the call (and closed after
// it) once it was found to be the directory made (else ErrMoved, and fn
// is not called). Packages built on this one use it for what Dir has no
// method for.
func (d *Dir) Use(fn func(fd int) error) error {
	if d.f != nil {
		return fn(int(d.f.Fd()))
	}
	fd, err := d.reach()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return fn(fd)
}

// Close closes the directory's descriptor; a unit's Dir has none to close.
func (d *Dir) Close() error {
	if d.f == nil {
		return nil
	}
	return d.f.Close()
}

// Stat returns the status of the entry name, not following a symbolic
// link (fstatat with AT_SYMLINK_NOFOLLOW).
func (d *Dir) Stat(name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := CheckName(name); err != nil {
		return st, err
	}
	err := d.Use(func(fd int) error {
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &os.PathError{Op: "stat", Path: d.Join(name), Err: err}
		}
		return nil
	})
	return st, err
}

// Chmod sets the directory's own mode with fchmod on its descriptor.
func (d *Dir) Chmod(perm os.FileMode) error {
	return d.Use(func(fd int) error {
		if err := unix.Fchmod(fd, UnixMode(perm)); err != nil {
			return fmt.Errorf("chmod %s: %w", d.path, err)
		}
		return nil
	})
}

// CheckName refuses anything but a plain name (ErrBadName).
func CheckName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return fmt.Errorf("%q: %w", name, ErrBadName)
	}
	return nil
}

// UnixMode converts perm, with its setuid, setgid and sticky bits, to a
// mode for chmod(2).
func UnixMode(perm os.FileMode) uint32 {
	m := uint32(perm.Perm())
	if perm&os.ModeSetuid != 0 {
		m |= unix.S_ISUID
	}
	if perm&os.ModeSetgid != 0 {
		m |= unix.S_ISGID
	}
	if perm&os.ModeSticky != 0 {
		m |= unix.S_ISVTX
	}
	return m
}

// ModeOf converts a directory's st_mode to the mode MakeSub gives a
// subdirectory that is to be like it: its permission bits and its setgid
// bit, which a shared DIR (2770) has so that everything made inside takes
// its group. (mkdir(2) passes the bit on, but the chmod that sets the
// new directory's mode would clear it.)
func ModeOf(st uint32) os.FileMode {
	m := os.FileMode(st & 0o777)
	if st&unix.S_ISGID != 0 {
		m |= os.ModeSetgid
	}
	return m
}

// OpenSub opens the existing subdirectory name of d. A symbolic link there
// is refused (ErrSymlink), and so is anything but a directory.
func (d *Dir) OpenSub(name string) (*Dir, error) {
	return d.openSub(name, unix.O_RDONLY)
}

// EnterSub opens the existing subdirectory name of d as OpenSub does, but,
// as Enter, needs only permission to enter it, not to list it.
func (d *Dir) EnterSub(name string) (*Dir, error) {
	return d.openSub(name, unix.O_PATH)
}

func (d *Dir) openSub(name string, flag int) (*Dir, error) {
	st, err := d.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("open directory: %w", err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil, fmt.Errorf("open directory %s: %w", d.Join(name), ErrSymlink)
	}
	fd, err := d.Openat(name, flag|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open directory %s: %w", d.Join(name), err)
	}
	return &Dir{f: os.NewFile(uintptr(fd), d.Join(name)), path: d.Join(name)}, nil
}

// MakeSub opens the subdirectory name of d, making it first (mkdirat) when
// it is missing, and gives it mode perm with fchmod on its descriptor. An
// existing one must be a real directory owned by the calling user: one
// that somebody else made could still be listed or changed by them.
func (d *Dir) MakeSub(name string, perm os.FileMode) (*Dir, error) {
	sub, _, err := d.makeOwn(name)
	if err != nil {
		return nil, err
	}
	if err := sub.Chmod(perm); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// makeOwn opens the subdirectory name of d, making it first (mkdirat,
// private: 0700) when it is missing; made says it was made here. An
// existing one must be a real directory owned by the calling user. Its
// mode is the caller's to set.
func (d *Dir) makeOwn(name string) (sub *Dir, made bool, err error) {
	if err := CheckName(name); err != nil {
		return nil, false, fmt.Errorf("make directory: %w", err)
	}
	// Private until its mode is set: nobody opens it in between.
	err = d.Use(func(fd int) error { return unix.Mkdirat(fd, name, 0o700) })
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, false, fmt.Errorf("make directory %s: %w", d.Join(name), err)
	}
	made = err == nil
	if sub, err = d.OpenSub(name); err != nil {
		return nil, false, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(sub.Fd(), &st); err != nil {
		sub.Close()
		return nil, false, fmt.Errorf("make directory %s: %w", sub.path, err)
	}
	if int(st.Uid) != os.Geteuid() {
		sub.Close()
		return nil, false, fmt.Errorf("make directory %s: it exists and belongs to uid %d, not to the agent; remove it", sub.path, st.Uid)
	}
	return sub, made, nil
}
