//go:build linux

package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/fifobridge/fifobridge/child"
)

// AllowedUser is one of -allow-users: the name or UID as given, and the
// credential a session opened with it runs with (its primary group, no
// supplementary groups), resolved once, at start.
type AllowedUser struct {
	Given      string
	Credential *syscall.Credential
}

// errNoAllowUsers is an open line's user on an agent without -allow-users.
var errNoAllowUsers = errors.New("-user needs the agent's -allow-users, which names the users a session may run as")

// parseAllowUsers resolves -allow-users (names or UIDs, comma-separated):
// each must be one the agent can start a child as, now.
func (r *Run) parseAllowUsers() error {
	given := r.Given.AllowUsers
	if given == "" {
		return nil
	}
	if r.Mode != "sessions" {
		return fmt.Errorf("invalid -allow-users: it names the users `open -user` may choose, and -mode is %s, not sessions", r.Mode)
	}
	for _, name := range strings.Split(given, ",") {
		name = strings.TrimSpace(name)
		cred, err := parseUserName(name)
		if err != nil {
			return fmt.Errorf("invalid -allow-users: %w", err)
		}
		r.AllowUsers = append(r.AllowUsers, AllowedUser{Given: name, Credential: cred})
	}
	return nil
}

// parseUserName resolves a user given by name or UID, with no group.
func parseUserName(name string) (*syscall.Credential, error) {
	if name == "" || strings.Contains(name, ":") {
		return nil, fmt.Errorf("user %q: want a name or a UID (a session runs with the user's primary group)", name)
	}
	return child.ParseUser(name)
}

// sessionUser is the credential of an open line's user: one of
// -allow-users, found by the name or UID it was given as, or else by its
// UID.
func (r *Run) sessionUser(name string) (*syscall.Credential, error) {
	if len(r.AllowUsers) == 0 {
		return nil, errNoAllowUsers
	}
	for _, u := range r.AllowUsers {
		if u.Given == name {
			return u.Credential, nil
		}
	}
	notAllowed := fmt.Errorf("user %q is not one of the agent's -allow-users", truncate(name))
	uid, err := lookupUID(name)
	if err != nil {
		return nil, notAllowed
	}
	for _, u := range r.AllowUsers {
		if u.Credential.Uid == uid {
			return u.Credential, nil
		}
	}
	return nil, notAllowed
}

// lookupUID is the UID of a user given by name or UID.
func lookupUID(name string) (uint32, error) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), nil
	}
	cred, err := parseUserName(name)
	if err != nil {
		return 0, err
	}
	return cred.Uid, nil
}

// truncate shortens what a line gave to a length an error may quote.
func truncate(s string) string {
	const most = 64
	if len(s) > most {
		return s[:most] + "..."
	}
	return s
}

// ChildUsers are the users other than root that the agent may start
// children as: the run's -user and -allow-users. Each is one the FIFO
// directory must keep out (see -perm).
func (r *Run) ChildUsers() []*syscall.Credential {
	var users []*syscall.Credential
	add := func(c *syscall.Credential) {
		if c == nil || c.Uid == 0 {
			return
		}
		for _, u := range users {
			if u.Uid == c.Uid && u.Gid == c.Gid {
				return
			}
		}
		users = append(users, c)
	}
	add(r.Credential)
	for _, u := range r.AllowUsers {
		add(u.Credential)
	}
	return users
}
