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
	// An empty, non-nil Groups clears the supplementary groups.
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}, nil
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
