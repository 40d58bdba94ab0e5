//go:build linux

package status

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// shared returns a directory every user can write, and a root-owned 0600
// file outside it.
func shared(t *testing.T) (dir, secret string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(dir, 0o777))
	require.NoError(t, os.Chmod(dir, 0o777))
	secret = filepath.Join(base, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	return dir, secret
}

func requireUntouched(t *testing.T, secret string) {
	t.Helper()
	fi, err := os.Lstat(secret)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode())
	b, err := os.ReadFile(secret)
	require.NoError(t, err)
	require.Equal(t, "secret", string(b))
}

func TestWriteRefusesLinks(t *testing.T) {
	fds := leakcheck.FDs(t)
	defer func() { require.Equal(t, fds, leakcheck.FDs(t), "descriptors left open") }()
	dir, secret := shared(t)
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()

	// A link at the file's name is replaced, never written through.
	path := filepath.Join(dir, "status.json")
	require.NoError(t, os.Symlink(secret, path))
	require.NoError(t, WriteAt(d, "status.json", Status{PID: 7, State: "running"}, 0o644))
	requireUntouched(t, secret)
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode())
	s, err := Read(path)
	require.NoError(t, err)
	require.Equal(t, 7, s.PID)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary file is left")

	// A link in place of the directory, in a shared directory, is refused.
	require.NoError(t, os.Symlink(filepath.Dir(secret), filepath.Join(dir, "sub")))
	_, err = sharedir.Open(filepath.Join(dir, "sub"), false)
	require.ErrorIs(t, err, sharedir.ErrSymlink)
	requireUntouched(t, secret)

	// Read does not follow a final link.
	require.NoError(t, os.Symlink(path, filepath.Join(dir, "alias")))
	_, err = Read(filepath.Join(dir, "alias"))
	require.Error(t, err)
}

func TestLock(t *testing.T) {
	fds := leakcheck.FDs(t)
	defer func() { require.Equal(t, fds, leakcheck.FDs(t), "descriptors left open") }()
	dir, secret := shared(t)
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()

	alive, err := AgentAlive(dir)
	require.NoError(t, err)
	require.False(t, alive, "no lock file: no agent")

	old := unix.Umask(0o077)
	f, err := Lock(d, 0o644)
	unix.Umask(old)
	require.NoError(t, err)
	fi, err := os.Lstat(filepath.Join(dir, LockName))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode())

	_, err = Lock(d, 0o644)
	require.ErrorIs(t, err, ErrLocked)
	alive, err = AgentAlive(dir)
	require.NoError(t, err)
	require.True(t, alive)

	require.NoError(t, f.Close())
	alive, err = AgentAlive(dir)
	require.NoError(t, err)
	require.False(t, alive, "a free lock: the agent is gone")

	// A link at DIR/lock is refused by both.
	require.NoError(t, os.Remove(filepath.Join(dir, LockName)))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, LockName)))
	_, err = Lock(d, 0o644)
	require.ErrorIs(t, err, sharedir.ErrSymlink)
	_, err = AgentAlive(dir)
	require.ErrorIs(t, err, sharedir.ErrSymlink)
	requireUntouched(t, secret)

	// So is a FIFO, without blocking.
	require.NoError(t, os.Remove(filepath.Join(dir, LockName)))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, LockName), 0o644))
	_, err = Lock(d, 0o644)
	require.ErrorContains(t, err, "not a regular file")
	_, err = AgentAlive(dir)
	require.True(t, err != nil && strings.Contains(err.Error(), "not a regular file"), "%v", err)
}

// TestWriteReplaces: each write replaces the file, whatever was there but a
// directory, and leaves no other file behind; a directory there is
// refused and left as it was.
func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	path := filepath.Join(dir, "status.json")
	for i := 1; i <= 3; i++ { // none there, then the last write's file
		require.NoError(t, WriteAt(d, "status.json", Status{PID: i}, 0o644))
		s, err := Read(path)
		require.NoError(t, err)
		require.Equal(t, i, s.PID)
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, ents, 1, "no temporary or old file is left")
	}

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "inside"), []byte("x"), 0o644))
	require.Error(t, WriteAt(d, "status.json", Status{PID: 9}, 0o644))
	b, err := os.ReadFile(filepath.Join(path, "inside"))
	require.NoError(t, err, "the directory is back in its place")
	require.Equal(t, "x", string(b))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary file is left")
}

// TestLockModeFollowsPerm: DIR/lock gets the mode FileMode gives for the
// agent's -perm, whatever the umask, also when the file was there before.
func TestLockModeFollowsPerm(t *testing.T) {
	dir := t.TempDir()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	old := unix.Umask(0o077)
	defer unix.Umask(old)
	for _, perm := range []os.FileMode{0o666, 0o660, 0o600, 0o620} {
		f, err := Lock(d, FileMode(perm))
		require.NoError(t, err)
		fi, err := os.Lstat(filepath.Join(dir, LockName))
		require.NoError(t, err)
		require.Equal(t, FileMode(perm), fi.Mode(), "-perm %04o", perm)
		require.NoError(t, f.Close())
	}
}

// TestLockWaitsOutAProbe: a health check or a send that asks whether an
// agent is alive holds a shared lock for a moment; an agent that starts
// just then still gets the lock. A lock that stays held is refused.
func TestLockWaitsOutAProbe(t *testing.T) {
	dir := t.TempDir()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, os.WriteFile(filepath.Join(dir, LockName), nil, 0o644))
	probe, err := os.Open(filepath.Join(dir, LockName))
	require.NoError(t, err)
	defer probe.Close()

	require.NoError(t, unix.Flock(int(probe.Fd()), unix.LOCK_SH|unix.LOCK_NB))
	_, err = Lock(d, 0o644)
	require.ErrorIs(t, err, ErrLocked, "a lock held for good is refused")

	require.NoError(t, unix.Flock(int(probe.Fd()), unix.LOCK_SH|unix.LOCK_NB))
	// The probe lets go after 20 ms, as a slow one might: within probeGrace.
	// The test waits for it before probe is closed.
	fd := int(probe.Fd())
	unlocked := make(chan struct{})
	time.AfterFunc(20*time.Millisecond, func() { defer close(unlocked); unix.Flock(fd, unix.LOCK_UN) })
	f, err := Lock(d, 0o644)
	<-unlocked
	require.NoError(t, err, "a probe's shared lock must not make the agent fail")
	require.NoError(t, f.Close())
}
