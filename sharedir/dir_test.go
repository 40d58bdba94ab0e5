//go:build linux

package sharedir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// sharedDir returns a new directory that every user can write, like a
// shared FIFO directory.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shared")
	require.NoError(t, os.Mkdir(dir, 0o777))
	require.NoError(t, os.Chmod(dir, 0o777))
	return dir
}

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	return fi.Mode()
}

func TestOpenDirLinks(t *testing.T) {
	leakcheck.Check(t)
	shared := sharedDir(t)
	real := filepath.Join(t.TempDir(), "real")
	require.NoError(t, os.MkdirAll(filepath.Join(real, "sub"), 0o755))

	t.Run("a link in a directory others can write is refused", func(t *testing.T) {
		require.NoError(t, os.Symlink(real, filepath.Join(shared, "l")))
		for _, p := range []string{filepath.Join(shared, "l"), filepath.Join(shared, "l", "sub")} {
			_, err := Open(p, false)
			require.ErrorIs(t, err, ErrSymlink, p)
			_, err = Open(filepath.Join(p, "new"), true)
			require.ErrorIs(t, err, ErrSymlink, p)
		}
		_, err := os.Stat(filepath.Join(real, "new"))
		require.ErrorIs(t, err, os.ErrNotExist, "nothing made through the link")
	})
	t.Run("a link only root could make is followed", func(t *testing.T) {
		trusted := t.TempDir() // 0700, root's
		rel, err := filepath.Rel(trusted, real)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(rel, filepath.Join(trusted, "rel")))
		require.NoError(t, os.Symlink(real, filepath.Join(trusted, "abs")))
		d, err := Open(filepath.Join(trusted, "rel", "sub"), false)
		require.NoError(t, err)
		require.NoError(t, d.Close())
		d, err = Open(filepath.Join(trusted, "abs", "sub"), false)
		require.NoError(t, err)
		require.NoError(t, unix.Mkfifoat(d.Fd(), "x", 0o600))
		require.NoError(t, d.Close())
		require.Equal(t, os.ModeNamedPipe, modeOf(t, filepath.Join(real, "sub", "x")).Type())
	})
	t.Run("create makes missing directories", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "a", "b")
		d, err := Open(p, true)
		require.NoError(t, err)
		require.Equal(t, p, d.Path())
		require.NoError(t, d.Close())
		require.True(t, modeOf(t, p).IsDir())
	})
	t.Run("a file is not a directory", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "f")
		require.NoError(t, os.WriteFile(f, nil, 0o600))
		_, err := Open(f, true)
		require.ErrorIs(t, err, unix.ENOTDIR)
	})
}

func TestMakeSub(t *testing.T) {
	leakcheck.Check(t)
	shared := sharedDir(t)
	d, err := Open(shared, false)
	require.NoError(t, err)
	defer d.Close()
	old := unix.Umask(0o077)
	sub, err := d.MakeSub("replies", 0o733|os.ModeSticky)
	unix.Umask(old)
	require.NoError(t, err)
	require.NoError(t, sub.Close())
	require.Equal(t, os.ModeDir|os.ModeSticky|0o733, modeOf(t, filepath.Join(shared, "replies")))

	require.NoError(t, os.Mkdir(filepath.Join(shared, "theirs"), 0o777))
	require.NoError(t, os.Chown(filepath.Join(shared, "theirs"), 65534, 65534))
	_, err = d.MakeSub("theirs", 0o733|os.ModeSticky)
	require.ErrorContains(t, err, "belongs to uid 65534")
	require.Equal(t, os.ModeDir, modeOf(t, filepath.Join(shared, "theirs")).Type())
}

// TestMake: a directory Make makes gets exactly the mode asked for,
// whatever the umask, and the ones above it 0755 less the umask; an
// existing one keeps its mode and is not reported as made.
func TestMake(t *testing.T) {
	leakcheck.Check(t)
	old := unix.Umask(0o077)
	defer unix.Umask(old)
	base := t.TempDir()
	path := filepath.Join(base, "a", "b")
	d, made, err := Make(path, 0o750)
	require.NoError(t, err)
	require.True(t, made)
	require.NoError(t, d.Close())
	require.Equal(t, os.ModeDir|0o750, modeOf(t, path))
	require.Equal(t, os.ModeDir|0o700, modeOf(t, filepath.Join(base, "a")))

	require.NoError(t, os.Chmod(path, 0o711))
	d, made, err = Make(path, 0o750)
	require.NoError(t, err)
	require.False(t, made)
	require.NoError(t, d.Close())
	require.Equal(t, os.ModeDir|0o711, modeOf(t, path))
}

// A subdirectory made like a shared (setgid) directory keeps the bit that
// gives everything made inside the directory's group.
func TestMakeSubKeepsSetgid(t *testing.T) {
	top := t.TempDir()
	require.NoError(t, unix.Chmod(top, 0o2770))
	d, err := Open(top, false)
	require.NoError(t, err)
	defer d.Close()
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(d.Fd(), &st))
	sub, err := d.MakeSub("sub", ModeOf(st.Mode&^0o022|0o700))
	require.NoError(t, err)
	defer sub.Close()
	fi, err := os.Stat(filepath.Join(top, "sub"))
	require.NoError(t, err)
	require.Equal(t, os.ModeSetgid, fi.Mode()&os.ModeSetgid, "mode %v", fi.Mode())
	require.Equal(t, os.FileMode(0o750), fi.Mode().Perm())
	require.Equal(t, os.FileMode(0o755), ModeOf(0o40755).Perm())
	require.Zero(t, ModeOf(0o40755)&os.ModeSetgid)
}
