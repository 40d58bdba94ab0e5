//go:build linux

package procfs

import (
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openFDs lists the descriptors the test process holds.
func openFDs(t *testing.T) []int {
	t.Helper()
	names, err := DirNames("/proc/self/fd")
	require.NoError(t, err)
	var fds []int
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil {
			fds = append(fds, fd)
		}
	}
	return fds
}

// TestReadOutOfDescriptors: with every descriptor in use (EMFILE), os's
// reads fail and ReadFile and DirNames still read, through the reserve;
// once descriptors are free again, the reserve is made whole, and nothing
// opened here is left open.
func TestReadOutOfDescriptors(t *testing.T) {
	Reserve()
	require.False(t, reserveShort())
	before := openFDs(t)

	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	tight := lim
	tight.Cur = uint64(slices.Max(before)) + 16
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &tight))
	var filler []int
	defer func() {
		for _, fd := range filler {
			unix.Close(fd)
		}
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	}()
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == unix.EMFILE {
			break
		}
		require.NoError(t, err)
		filler = append(filler, fd)
	}

	_, err := os.ReadFile("/proc/self/stat")
	require.ErrorIs(t, err, unix.EMFILE, "every descriptor is in use")
	for range reservedFDs + 2 {
		b, err := ReadFile("/proc/self/stat")
		require.NoError(t, err)
		require.Contains(t, string(b), strconv.Itoa(os.Getpid())+" (")
		_, err = DirNames("/proc/self")
		require.NoError(t, err)
	}
	require.True(t, reserveShort(), "a reserved descriptor was given back")

	for _, fd := range filler {
		unix.Close(fd)
	}
	filler = nil
	_, err = ReadFile("/proc/self/stat")
	require.NoError(t, err)
	require.False(t, reserveShort(), "the reserve is whole again")
	require.ElementsMatch(t, before, openFDs(t))
}
