//go:build linux

package status

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/sharedir"
	"golang.org/x/sys/unix"
)

// LockName is the name of the agent's lock file in DIR.
const LockName = "lock"

// ErrLocked is returned by Lock when another process holds the lock: an
// agent serves the directory already.
var ErrLocked = errors.New("another agent holds the lock")

// Lock takes the agent's lock, an exclusive flock(2) on DIR/lock, for as
// long as the returned file stays open (it has O_CLOEXEC: no child
// inherits it). The file is opened through d's descriptor, never following
// a link, created when missing, and must be a regular file; its mode is set
// to perm (see FileMode) with fchmod when the agent owns it, so that the
// users who may use the agent can see whether it is alive (AgentAlive). It
// returns ErrLocked when another process holds the lock.
func Lock(d *sharedir.Dir, perm os.FileMode) (*os.File, error) {
	f, err := d.OpenFile(LockName, unix.O_RDWR|unix.O_CREAT, perm)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", d.Join(LockName), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err == nil && int(st.Uid) == os.Geteuid() {
		f.Chmod(perm)
	}
	err = lockExclusive(f)
	if errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", d.Join(LockName), ErrLocked)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", d.Join(LockName), err)
	}
	return f, nil
}

// probeGrace is how long Lock keeps trying when the lock is taken: a
// health check or a send that asks whether an agent is alive holds a
// shared lock for a few microseconds, and must not make an agent that
// starts just then fail. An agent holds its lock for good, so one that
// serves the directory still refuses a second agent.
const probeGrace = 100 * time.Millisecond

// probePoll is how often Lock tries again within probeGrace.
const probePoll = 2 * time.Millisecond

// lockExclusive takes the exclusive lock on f, trying again for
// probeGrace while it is held.
func lockExclusive(f *os.File) error {
	deadline := time.Now().Add(probeGrace)
	for {
		err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(probePoll)
	}
}

// AgentAlive reports whether an agent serves the directory dir: whether
// some process holds the lock on dir/lock. It tries a shared, non-blocking
// flock on the file (opened read-only, not following a link, through dir's
// descriptor) and releases it at once; a free lock, or no lock file, means
// no agent. It works from any PID namespace, and needs only permission to
// enter dir and read the lock file.
func AgentAlive(dir string) (bool, error) {
	d, err := sharedir.Enter(dir)
	if err != nil {
		return false, fmt.Errorf("check agent: %w", err)
	}
	defer d.Close()
	return AgentAliveAt(d)
}

// AgentAliveAt is AgentAlive for the directory d, already entered: a
// client that entered DIR once asks it with that descriptor.
func AgentAliveAt(d *sharedir.Dir) (bool, error) {
	f, err := d.OpenFile(LockName, unix.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check agent: %w", err)
	}
	defer f.Close()
	err = flock(f, unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("check agent %s: %w", d.Join(LockName), err)
	}
	return false, nil // closing f releases the shared lock
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}
