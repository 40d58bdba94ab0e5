//go:build linux

package child

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// ParseUser reads "UID[:GID]", where each part is a number or a name from
// /etc/passwd and /etc/group. Without GID, the user's primary group from
// /etc/passwd is used, or, for a uid it does not list, a gid equal to the
// uid (never root's group by accident). The result runs a child as that
// user with no supplementary groups.
func ParseUser(s string) (*syscall.Credential, error) {
	name, group, hasGroup := strings.Cut(s, ":")
	if name == "" || hasGroup && group == "" {
		return nil, fmt.Errorf("parse user %q: want UID[:GID]", s)
	}
	uid, gid, err := lookupUser(name)
	if err != nil {
		return nil, fmt.Errorf("parse user %q: %w", s, err)
	}
	if hasGroup {
		if gid, err = lookupGroup(group); err != nil {
			return nil, fmt.Errorf("parse user %q: %w", s, err)
		}
	}
	// 2^32-1 is -1 to setuid(2): "leave unchanged", never a user.
	if uid == ^uint32(0) || gid == ^uint32(0) {
		return nil, fmt.Errorf("parse user %q: 4294967295 is no id", s)
	}
	// Only root may become someone else.
	if euid := uint32(syscall.Geteuid()); euid != 0 && uid != euid {
		return nil, fmt.Errorf("parse user %q: the agent runs as uid %d and cannot start children as another user", s, euid)
	}
	// An empty, non-nil Groups clears the supplementary groups.
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}, nil
}

// UserEnv returns env for a child running as uid, as su and docker --user
// do: HOME, USER and LOGNAME that are root's (or unset) are replaced with
// uid's from /etc/passwd, so that the child does not get root's home; HOME
// is / for a uid passwd does not list. Values set on purpose to something
// else, such as HOME=/home/cli, are kept.
func UserEnv(env []string, uid uint32) []string {
	home, name := "/", ""
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		name = u.Username
		if u.HomeDir != "" {
			home = u.HomeDir
		}
	}
	rootHome := "/root"
	if u, err := user.LookupId("0"); err == nil && u.HomeDir != "" {
		rootHome = u.HomeDir
	}
	set := map[string]string{"HOME": home, "USER": name, "LOGNAME": name}
	rootish := map[string]bool{"HOME=": true, "HOME=/": true, "HOME=" + rootHome: true, "USER=root": true, "LOGNAME=root": true, "USER=": true, "LOGNAME=": true}
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := set[k]; ours {
			if !rootish[kv] {
				delete(set, k) // set on purpose: keep it
				out = append(out, kv)
			}
			continue
		}
		out = append(out, kv)
	}
	for _, k := range []string{"HOME", "USER", "LOGNAME"} {
		if v, ok := set[k]; ok && v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// SessionEnv returns env for a child running as uid when its user was
// chosen for it alone (a session's open -user): HOME, USER and LOGNAME
// are uid's from /etc/passwd whatever env held, as login(1) sets them,
// since the agent's own values belong to another user. For a uid that
// passwd does not list, HOME is / and USER and LOGNAME are unset, as
// docker run --user gives such a uid.
func SessionEnv(env []string, uid uint32) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME", "USER", "LOGNAME":
		default:
			out = append(out, kv)
		}
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return append(out, "HOME=/")
	}
	home := u.HomeDir
	if home == "" {
		home = "/"
	}
	return append(out, "HOME="+home, "USER="+u.Username, "LOGNAME="+u.Username)
}

func lookupUser(name string) (uid, gid uint32, err error) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		uid, gid = uint32(n), uint32(n)
		if u, err := user.LookupId(name); err == nil {
			if g, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
				gid = uint32(g)
			}
		}
		return uid, gid, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, err
	}
	uid64, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return 0, 0, err
	}
	gid64, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return 0, 0, err
	}
	return uint32(uid64), uint32(gid64), nil
}

func lookupGroup(name string) (uint32, error) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(g.Gid, 10, 32)
	return uint32(n), err
}
