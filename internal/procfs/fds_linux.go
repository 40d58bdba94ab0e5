package procfs

import "golang.org/x/sys/unix"

// Descriptors returns how many descriptors the process holds, or -1 when
// /proc/self/fd cannot be read. The size stat(2) gives /proc/self/fd is
// that count (Linux 6.2 and later): no listing of every descriptor, which
// an agent with many open sessions would pay at each status rewrite, and
// no descriptor of its own. Where it is 0 (older kernels), the directory
// is listed, less the descriptor it is listed through.
func Descriptors() int {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/fd", &st); err == nil && st.Size > 0 {
		return int(st.Size)
	}
	names, err := DirNames("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(names) - 1
}
