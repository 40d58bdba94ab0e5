package procfs

// Descriptors returns how many descriptors the process holds, less the
// one it lists them through, or -1 when /proc/self/fd cannot be read.
func Descriptors() int {
	names, err := DirNames("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(names) - 1
}
