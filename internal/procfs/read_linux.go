// Package procfs reads the small files of /proc and of cgroupfs that a
// tree stop needs, and counts the agent's descriptors, with bare system
// calls, through a reserve of descriptors: an agent whose descriptors ran
// out (EMFILE) gives one of the reserve back to the kernel and opens
// again, so it can still stop a child's tree. It is written by hand, not with os.ReadFile and
// os.ReadDir, for that reason alone (TestReadOutOfDescriptors shows it,
// and test's TestStopOutOfDescriptors for a whole stop).
//
// Guarantees: every descriptor opened here has O_CLOEXEC and is closed
// before the call returns, except Open's, which the caller closes; EINTR
// is retried. Open returns the bare errno, for a caller that scans /proc
// and must not allocate an error per process gone.
package procfs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ReadFile reads a small file of /proc or of a cgroup. It is written by
// hand, not os.ReadFile, for one reason a test shows: its open goes
// through the descriptor reserve (Open), so that an agent whose
// descriptors have run out can still read what a tree stop needs
// (TestStopOutOfDescriptors); os.ReadFile would fail with EMFILE there.
func ReadFile(path string) ([]byte, error) {
	fd, err := open(path, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 1024)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", path, err)
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// DirNames lists the entries of the directory at path, as ReadFile does:
// with bare system calls.
func DirNames(path string) ([]string, error) {
	fd, err := open(path, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var names []string
	var buf [8192]byte
	for {
		n, err := unix.ReadDirent(fd, buf[:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, fmt.Errorf("read directory %s: %w", path, err)
		case n <= 0:
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// open opens path with flag and O_CLOEXEC, retrying on EINTR, and with
// the descriptor reserve when descriptors have run out (Open).
func open(path string, flag int) (int, error) {
	fd, err := Open(path, flag)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", path, err)
	}
	return fd, nil
}
