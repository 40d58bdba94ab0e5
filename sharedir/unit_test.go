//go:build linux

package sharedir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
)

// unitLayout is a session's: its FIFOs and its winsize.
var unitLayout = Layout{{Name: "in", Kind: FIFO}, {Name: "out", Kind: FIFO}, {Name: "ask", Kind: FIFO}, {Name: "winsize", Kind: File}}

// unitEntries are what an open with a terminal and no prompt makes.
var unitEntries = []Entry{{Name: "in", Kind: FIFO, Perm: 0o620}, {Name: "out", Kind: FIFO, Perm: 0o640}, {Name: "winsize", Kind: File, Perm: 0o660}}

// Issue 33: a session's directory is one unit, made whole in one call
// and removed whole in one call, and it costs no descriptor while nothing
// is done in it. MakeUnit makes the directory and its entries with their
// modes, whatever the umask (0077 here), the directory's setgid bit
// included; the unit holds no descriptor, yet every operation in it
// works (it is reached through its parent for each); Remove removes the
// entries and the directory.
func TestUnitMadeAndRemovedWhole(t *testing.T) {
	leakcheck.Check(t)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	parent, err := Open(t.TempDir(), false)
	require.NoError(t, err)
	defer parent.Close()
	fds := leakcheck.FDs(t)

	u, err := parent.MakeUnit("s1", 0o750|os.ModeSetgid, unitLayout, unitEntries)
	require.NoError(t, err)
	require.Equal(t, fds, leakcheck.FDs(t), "the unit holds a descriptor")
	require.Equal(t, -1, u.Dir().Fd())
	path := parent.Join("s1")
	require.Equal(t, os.ModeDir|0o750|os.ModeSetgid, modeOf(t, path))
	require.Equal(t, os.ModeNamedPipe|0o620, modeOf(t, filepath.Join(path, "in")))
	require.Equal(t, os.ModeNamedPipe|0o640, modeOf(t, filepath.Join(path, "out")))
	require.Equal(t, os.FileMode(0o660), modeOf(t, filepath.Join(path, "winsize")))
	_, err = os.Lstat(filepath.Join(path, "ask"))
	require.ErrorIs(t, err, os.ErrNotExist, "an entry of the layout that was not asked for is made")

	st, err := u.Dir().Stat("in")
	require.NoError(t, err)
	require.Equal(t, uint32(unix.S_IFIFO), st.Mode&unix.S_IFMT)
	f, err := u.Dir().OpenFile("winsize", unix.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Equal(t, fds, leakcheck.FDs(t), "an operation in the unit left a descriptor")

	require.NoError(t, u.Remove())
	_, err = os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "the directory is left")
	require.Equal(t, fds, leakcheck.FDs(t))
}

// A unit's directory is reached only while its name names the very
// directory made: once it was moved away and another put in its place,
// nothing is done there (ErrMoved), nor in the one moved, and Remove
// removes neither.
func TestUnitMovedIsNotReached(t *testing.T) {
	leakcheck.Check(t)
	parent, err := Open(t.TempDir(), false)
	require.NoError(t, err)
	defer parent.Close()
	u, err := parent.MakeUnit("s1", 0o755, unitLayout, unitEntries[:2])
	require.NoError(t, err)
	path := parent.Join("s1")
	require.NoError(t, os.Rename(path, parent.Join("moved")))
	require.NoError(t, os.Mkdir(path, 0o755))

	_, err = u.Dir().Stat("in")
	require.ErrorIs(t, err, ErrMoved)
	require.ErrorIs(t, u.Dir().MakeFIFO("ask", 0o600), ErrMoved)
	require.ErrorIs(t, u.Remove(), ErrMoved)
	left, err := os.ReadDir(path)
	require.NoError(t, err)
	require.Empty(t, left, "something was made in the directory put in its place")
	_, err = os.Lstat(filepath.Join(parent.Join("moved"), "in"))
	require.NoError(t, err, "the moved directory was emptied")

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(parent.Join("moved"), path))
	_, err = u.Dir().Stat("in")
	require.ErrorIs(t, err, ErrSymlink, "a link to the directory made is followed")
}

// What is at the unit's name and is not a directory of the caller's own
// is refused and left as it is: a link (also to a directory of its own),
// a file. A directory of its own is a leftover: it is emptied of the
// layout's entries and reused, and what else it holds stays, and keeps
// it from being removed: Remove says so, and removes the unit's entries.
func TestUnitPlantedAndLeftover(t *testing.T) {
	leakcheck.Check(t)
	parent, err := Open(t.TempDir(), false)
	require.NoError(t, err)
	defer parent.Close()
	target := t.TempDir()
	require.NoError(t, os.Symlink(target, parent.Join("link")))
	require.NoError(t, os.WriteFile(parent.Join("file"), []byte("x"), 0o600))
	_, err = parent.MakeUnit("link", 0o755, unitLayout, unitEntries)
	require.ErrorIs(t, err, ErrSymlink)
	_, err = parent.MakeUnit("file", 0o755, unitLayout, unitEntries)
	require.ErrorIs(t, err, unix.ENOTDIR)
	got, err := os.Readlink(parent.Join("link"))
	require.NoError(t, err)
	require.Equal(t, target, got)
	made, err := os.ReadDir(target)
	require.NoError(t, err)
	require.Empty(t, made, "something was made through the link")
	require.ErrorIs(t, parent.RemoveUnit("link", unitLayout), ErrSymlink)
	_, err = os.Lstat(parent.Join("link"))
	require.NoError(t, err, "the link was removed")

	stale := parent.Join("stale")
	require.NoError(t, os.Mkdir(stale, 0o777))
	require.NoError(t, unix.Mkfifo(filepath.Join(stale, "ask"), 0o666))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "keep"), nil, 0o600))
	u, err := parent.MakeUnit("stale", 0o755, unitLayout, unitEntries[:2])
	require.NoError(t, err)
	_, err = os.Lstat(filepath.Join(stale, "ask"))
	require.ErrorIs(t, err, os.ErrNotExist, "the leftover's ask was kept")
	require.Equal(t, os.ModeDir|0o755, modeOf(t, stale))
	require.Error(t, u.Remove(), "a directory that holds more than the unit's files was removed")
	left, err := os.ReadDir(stale)
	require.NoError(t, err)
	require.Len(t, left, 1, "only keep is left")
	require.Equal(t, "keep", left[0].Name())
}

// RemoveUnit removes a leftover: its layout's entries, each only if it is
// of its kind, then the directory.
func TestRemoveUnitOnlyItsEntries(t *testing.T) {
	leakcheck.Check(t)
	parent, err := Open(t.TempDir(), false)
	require.NoError(t, err)
	defer parent.Close()
	dir := parent.Join("old")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, "in"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "winsize"), nil, 0o600))
	require.NoError(t, parent.RemoveUnit("old", unitLayout))
	_, err = os.Lstat(dir)
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in"), []byte("not a fifo"), 0o600))
	require.ErrorIs(t, parent.RemoveUnit("old", unitLayout), ErrOtherKind)
	b, err := os.ReadFile(filepath.Join(dir, "in"))
	require.NoError(t, err)
	require.Equal(t, "not a fifo", string(b), "a file in a FIFO's place was removed")
}
