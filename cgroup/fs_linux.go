package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Where the agent's own cgroup is: the "0::" line of /proc/self/cgroup
// names it relative to the root of the cgroup2 hierarchy, and
// /proc/self/mountinfo says where (and which part of) that hierarchy is
// mounted. Both are parsed by pure functions.

// errNoV2 is what Own's error wraps when no cgroup v2 hierarchy is
// mounted or the agent's cgroup in it cannot be told. It is unexported:
// callers only log it (-cgroup auto then falls back to the tree stop).
var errNoV2 = errors.New("no cgroup v2")

// parseSelfCgroup returns the cgroup v2 path of a /proc/PID/cgroup file:
// the path of its "0::" line, without the " (deleted)" the kernel appends
// for a removed cgroup (then deleted is true). ok is false without such a
// line (a host with cgroup v1 only).
func parseSelfCgroup(data string) (path string, deleted, ok bool) {
	for _, line := range strings.Split(data, "\n") {
		rest, found := strings.CutPrefix(line, "0::")
		if !found {
			continue
		}
		path, deleted = strings.CutSuffix(rest, " (deleted)")
		return path, deleted, path != ""
	}
	return "", false, false
}

// cgroup2Mount is a mount of the cgroup2 file system.
type cgroup2Mount struct {
	root  string // the hierarchy's path mounted there ("/" for the whole)
	point string // where it is mounted
}

// parseCgroup2Mounts returns the cgroup2 mounts of a mountinfo file, in
// order. Fields (proc(5)): ID, parent ID, major:minor, root, mount point,
// options, optional fields, "-", fs type, source, super options; paths
// escape space, tab, newline and backslash as \ooo.
func parseCgroup2Mounts(data string) []cgroup2Mount {
	var mounts []cgroup2Mount
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(f) || f[sep+1] != "cgroup2" {
			continue
		}
		mounts = append(mounts, cgroup2Mount{root: unescapeMount(f[3]), point: unescapeMount(f[4])})
	}
	return mounts
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// cgroupDir returns the directory of cgroup path (as /proc/self/cgroup
// names it) in the first of mounts that shows it: one whose root is the
// path or one of its ancestors.
func cgroupDir(path string, mounts []cgroup2Mount) (string, bool) {
	for _, m := range mounts {
		rel, ok := under(path, m.root)
		if ok {
			return filepath.Join(m.point, rel), true
		}
	}
	return "", false
}

// under returns path relative to root when path is root or below it.
func under(path, root string) (string, bool) {
	if root == "/" {
		return path, true
	}
	if path == root {
		return "/", true
	}
	rest, ok := strings.CutPrefix(path, root+"/")
	return "/" + rest, ok
}

// Own returns the directory of the agent's own cgroup v2, from
// /proc/self/cgroup and /proc/self/mountinfo.
func Own() (string, error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("read own cgroup: %w", err)
	}
	path, deleted, ok := parseSelfCgroup(string(cg))
	if !ok {
		return "", fmt.Errorf("%w: /proc/self/cgroup has no 0:: line", errNoV2)
	}
	if deleted {
		return "", fmt.Errorf("%w: the agent's cgroup %s was removed", errNoV2, path)
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mounts: %w", err)
	}
	mounts := parseCgroup2Mounts(string(mi))
	if len(mounts) == 0 {
		return "", fmt.Errorf("%w: no cgroup2 file system is mounted", errNoV2)
	}
	dir, ok := cgroupDir(path, mounts)
	if !ok {
		return "", fmt.Errorf("%w: the agent's cgroup %s is outside every cgroup2 mount", errNoV2, path)
	}
	return dir, nil
}
