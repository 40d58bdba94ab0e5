//go:build linux

package cgroup

import "testing"

func TestCgroupParseSelf(t *testing.T) {
	for _, c := range []struct {
		name, data, path string
		deleted, ok      bool
	}{
		{"hybrid", "9:name=systemd:/\n4:memory:/a/b\n1:cpu:/\n0::/\n", "/", false, true},
		{"unified", "0::/system.slice/docker-1.scope\n", "/system.slice/docker-1.scope", false, true},
		{"nested", "0::/kubepods/burstable/pod1/abc/fifobridge-1-2-3-4\n", "/kubepods/burstable/pod1/abc/fifobridge-1-2-3-4", false, true},
		{"deleted", "0::/user.slice/gone (deleted)\n", "/user.slice/gone", true, true},
		{"v1 only", "4:memory:/x\n1:cpu:/\n", "", false, false},
		{"empty", "", "", false, false},
		{"spaces", "0::/a b/c\n", "/a b/c", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, deleted, ok := parseSelfCgroup(c.data)
			if path != c.path || deleted != c.deleted || ok != c.ok {
				t.Fatalf("parseSelfCgroup = %q, %v, %v; want %q, %v, %v", path, deleted, ok, c.path, c.deleted, c.ok)
			}
		})
	}
}

const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const unifiedMountinfo = `22 1 0:21 / /proc rw,nosuid - proc proc rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate
`

// A container without a cgroup namespace sees the host hierarchy's
// subtree mounted: its root field is the container's cgroup.
const containerMountinfo = `600 500 0:30 /kubepods/pod1/abc /sys/fs/cgroup ro,nosuid master:9 - cgroup2 cgroup rw
`

const escapedMountinfo = `41 31 0:38 / /run/my\040cgroups\134x rw,relatime shared:1 master:2 - cgroup2 none rw
`

func TestCgroupParseMountinfo(t *testing.T) {
	for _, c := range []struct {
		name, mountinfo, cgroup, dir string
		ok                           bool
	}{
		{"hybrid", hybridMountinfo, "/", "/sys/fs/cgroup/unified", true},
		{"hybrid nested", hybridMountinfo, "/a/b", "/sys/fs/cgroup/unified/a/b", true},
		{"unified", unifiedMountinfo, "/system.slice/x.scope", "/sys/fs/cgroup/system.slice/x.scope", true},
		{"container root", containerMountinfo, "/kubepods/pod1/abc", "/sys/fs/cgroup", true},
		{"container nested", containerMountinfo, "/kubepods/pod1/abc/sub", "/sys/fs/cgroup/sub", true},
		{"outside the mount", containerMountinfo, "/kubepods/pod1/abcd", "", false},
		{"escapes", escapedMountinfo, "/x", `/run/my cgroups\x/x`, true},
		{"no cgroup2", "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n", "/", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, ok := cgroupDir(c.cgroup, parseCgroup2Mounts(c.mountinfo))
			if dir != c.dir || ok != c.ok {
				t.Fatalf("cgroupDir(%q) = %q, %v; want %q, %v", c.cgroup, dir, ok, c.dir, c.ok)
			}
		})
	}
}

func TestCgroupUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`: "/a b", `/t\011x`: "/t\tx", `/n\012`: "/n\n", `/b\134`: `/b\`,
		`/short\04`: `/short\04`, `/not\999`: `/not\999`, `/plain`: "/plain",
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCgroupNames(t *testing.T) {
	a := agentID{pidNS: 4026531836, pid: 42, start: 123456}
	name := a.name(7)
	if name != "fifobridge-4026531836-42-123456-7" {
		t.Fatalf("name = %q", name)
	}
	if got, anchor, seq, ok := parseCgroupName(name); !ok || got != a || anchor || seq != 7 {
		t.Fatalf("parseCgroupName(%q) = %+v, %v, %d, %v", name, got, anchor, seq, ok)
	}
	anchor := a.anchorName(2)
	if anchor != "fifobridge-4026531836-42-123456-a2" {
		t.Fatalf("anchorName = %q", anchor)
	}
	if got, isAnchor, try, ok := parseCgroupName(anchor); !ok || got != a || !isAnchor || try != 2 {
		t.Fatalf("parseCgroupName(%q) = %+v, %v, %d, %v", anchor, got, isAnchor, try, ok)
	}
	for _, bad := range []string{"fifobridge-1-2-3", "fifobridge-1-2-3-4-5", "fifobridge-a-2-3-4", "other-1-2-3-4",
		"fifobridge-1-0-3-4", "fifobridge-1-+2-3-4", "fifobridge-1-02-3-4", "fifobridge--2-3-4",
		"fifobridge-1-2-3-a", "fifobridge-1-2-3-aa1", "fifobridge-1-2-3-a01", "fifobridge-1-2-a3-4"} {
		if _, _, _, ok := parseCgroupName(bad); ok {
			t.Errorf("parseCgroupName(%q) accepted", bad)
		}
	}
	if ns, ok := parsePidNS("pid:[4026531836]"); !ok || ns != 4026531836 {
		t.Errorf("parsePidNS = %d, %v", ns, ok)
	}
	if _, ok := parsePidNS("net:[1]"); ok {
		t.Error("parsePidNS accepted a net namespace")
	}
}
