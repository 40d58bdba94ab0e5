//go:build linux

package status

import (
	"fmt"
	"path/filepath"
	"time"
)

// Stale is the age past which a status file no longer shows a healthy agent.
const Stale = 15 * time.Second

// Check reports why the agent serving dir, whose status file is at path,
// is not healthy, or nil when it is: the status is fresh, an agent holds
// dir/lock, its state is running or backoff, and the entry asked about
// is healthy by the one rule of an entry (healthy). With session "", the
// entry is the agent's stream child ("child": stream mode's; exec mode's
// says nothing), and in sessions mode there is none: a session's crash
// loop is not the agent's. With a session name, the agent must be in
// sessions mode and the session open. The pid in the file is not
// consulted: it means nothing in another PID namespace (a host checking
// a container's directory), where the lock still tells, at once, that
// the agent is gone.
func Check(dir, path, session string, now time.Time) error {
	s, err := checkAgent(dir, path, now)
	if err != nil {
		return err
	}
	c, err := s.entry(session)
	if err != nil || c == nil {
		return err
	}
	if err := c.healthy(); err != nil {
		if session != "" {
			return fmt.Errorf("session %s: %w", session, err)
		}
		return err
	}
	return nil
}

// entry is the child of s that a check of session is about: see Check.
func (s Status) entry(session string) (*ChildStatus, error) {
	if session == "" {
		if s.Mode == ModeSessions {
			return nil, nil
		}
		return &s.Child, nil
	}
	if s.Mode != ModeSessions {
		return nil, fmt.Errorf("the agent is in %s mode: it has no sessions (-session needs -mode sessions)", s.Mode)
	}
	if sess, ok := s.Session(session); ok {
		return &sess.Child, nil
	}
	return nil, fmt.Errorf("session %s is not open", session)
}

// checkAgent reads the status file at path and reports why the agent
// serving dir is not healthy, its child aside: see Check.
func checkAgent(dir, path string, now time.Time) (Status, error) {
	s, err := Read(path)
	if err != nil {
		return s, err
	}
	alive, err := AgentAlive(dir)
	switch age := now.Sub(s.UpdatedAt); {
	case err != nil:
	case !alive:
		err = fmt.Errorf("the agent is gone: nothing holds %s", filepath.Join(dir, LockName))
	case age > Stale:
		err = fmt.Errorf("status is stale: last updated %s ago (limit %s)", age.Round(time.Second), Stale)
	case age < -Stale:
		err = fmt.Errorf("status is from the future: updated_at %s", s.UpdatedAt.Format(time.RFC3339))
	case s.State != "running" && s.State != "backoff":
		err = fmt.Errorf("agent state is %q", s.State)
	}
	return s, err
}

// healthy is the one health rule of an entry, stream mode's child or a
// session's: it is unhealthy in a crash loop, as the agent decided it
// (ChildStatus.CrashLoop). Health does not judge the runs itself, so
// that the rule lives in one place, the supervisor's, and holds for
// every child the file describes.
func (c *ChildStatus) healthy() error {
	if !c.CrashLoop {
		return nil
	}
	return fmt.Errorf("crash loop: %d runs in a row ended within -restart-window (%s)", c.QuickExits, orUnknown(c.RestartWindow))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
