//go:build linux

package cgroup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPidsParseV1(t *testing.T) {
	self := "12:memory:/docker/abc\n8:pids:/docker/abc\n1:name=systemd:/\n0::/\n"
	path, ok := parseSelfCgroupV1(self, "pids")
	require.True(t, ok)
	require.Equal(t, "/docker/abc", path)
	_, ok = parseSelfCgroupV1("0::/x\n", "pids")
	require.False(t, ok, "a cgroup v2 line is no v1 hierarchy")

	mi := "30 25 0:26 /docker/abc /sys/fs/cgroup/pids ro,nosuid - cgroup cgroup ro,pids\n" +
		"31 25 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n" +
		"32 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
	mounts := parseCgroup1Mounts(mi, "pids")
	require.Equal(t, []cgroup2Mount{{root: "/docker/abc", point: "/sys/fs/cgroup/pids"}}, mounts)
	dir, ok := cgroupDir(path, mounts)
	require.True(t, ok)
	require.Equal(t, "/sys/fs/cgroup/pids", dir)
}

// TestPidsHeadroom reads the least headroom of a cgroup and the ones above
// it from their pids.max and pids.current, stopping at the first directory
// without pids.max.
func TestPidsHeadroom(t *testing.T) {
	root := t.TempDir()
	write := func(dir, max, cur string) {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "pids.max"), []byte(max+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "pids.current"), []byte(cur+"\n"), 0o644))
	}
	top := filepath.Join(root, "top")
	mid := filepath.Join(top, "mid")
	leaf := filepath.Join(mid, "leaf")
	write(top, "max", "500")
	write(mid, "100", "40")
	write(leaf, "max", "10")
	h, limited := pidsHeadroom(leaf)
	require.True(t, limited)
	require.Equal(t, 60, h)
	require.Equal(t, 60-pidsReserve, pidsBudget(h))
	write(leaf, "30", "10")
	h, _ = pidsHeadroom(leaf)
	require.Equal(t, 20, h)
	require.Zero(t, pidsBudget(pidsReserve+minPidsBudget-1), "too little to share")

	write(mid, "max", "40")
	write(leaf, "max", "10")
	_, limited = pidsHeadroom(leaf)
	require.False(t, limited)
}
