package cgroup

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Every agent holds an flock(2) on one cgroup for as long as it lives,
// its anchor (see anchor_linux.go): it takes it on the directory's
// descriptor right after making it, and the kernel drops it when that
// descriptor is closed, also when the agent is killed. A lock is a fact
// of the cgroup file system, the same from every PID namespace and every
// mount of the hierarchy, so an agent anywhere can tell a dead agent's
// cgroups (its anchor's lock is free) from a live one's, where the pids
// in their names mean nothing. Agents of older versions locked each
// cgroup they made instead; a sweep takes those locks too.

// errLockLost: a cgroup was removed, or taken by a sweep, between its
// mkdir and its lock, by an agent that took it for a dead agent's.
var errLockLost = errors.New("cgroup removed before it was locked")

// mkdirCgroup makes a cgroup; tests replace it to run a sweep between the
// mkdir and the lock.
var mkdirCgroup = unix.Mkdir

// makeLocked makes the cgroup at path and returns its directory's
// descriptor with the lock held.
func makeLocked(path string) (int, error) { return makeCgroup(path, true) }

// makeCgroup makes the cgroup at path and returns its directory's
// descriptor, with its lock held if lock is set.
func makeCgroup(path string, lock bool) (int, error) {
	if err := mkdirCgroup(path, 0o755); err != nil {
		return -1, fmt.Errorf("make cgroup %s: %w", path, err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return -1, errLockLost
	}
	if err != nil {
		unix.Rmdir(path)
		return -1, fmt.Errorf("open cgroup %s: %w", path, err)
	}
	if !lock {
		return fd, nil
	}
	err = lockCgroup(fd)
	if err == nil && !isPath(fd, path) {
		err = errLockLost
	}
	if err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			err = errLockLost // a sweep holds it and is removing it
		}
		if !errors.Is(err, errLockLost) {
			unix.Rmdir(path)
			err = fmt.Errorf("lock cgroup %s: %w", path, err)
		}
		return -1, err
	}
	return fd, nil
}

// lockCgroup takes the lock of the cgroup directory fd without waiting:
// EWOULDBLOCK when another descriptor holds it.
func lockCgroup(fd int) error {
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err
		}
	}
}

// isPath reports whether path still names the directory fd is open on.
func isPath(fd int, path string) bool {
	var a, b unix.Stat_t
	return unix.Fstat(fd, &a) == nil && unix.Stat(path, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// lockFree opens the cgroup at path and takes its lock. It returns
// the descriptor, holding the lock, when nobody held it; -1 when a live
// agent holds it, or when the cgroup cannot be opened.
func lockFree(path string) int {
	fd, _ := tryLock(path)
	return fd
}

// tryLock opens the cgroup at path and takes its lock. It returns the
// descriptor, holding the lock, when nobody held it; else -1 and why:
// EWOULDBLOCK when another holds it, ENOENT when the cgroup is gone.
func tryLock(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := lockCgroup(fd); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
