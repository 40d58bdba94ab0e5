//go:build linux

package status

import (
	"fmt"
	"path/filepath"
	"time"
)

// Stale is the age past which a status file no longer shows a healthy agent.
const Stale = 15 * time.Second

// Check reports why the agent serving dir, whose status file is at path, is
// not healthy, or nil when it is: the status is fresh, an agent holds
// dir/lock, its state is running or backoff, and its child is not in a
// crash loop. The pid in the file is not consulted: it means nothing in
// another PID namespace (a host checking a container's directory), where
// the lock still tells, at once, that the agent is gone.
func Check(dir, path string, now time.Time) error {
	s, err := checkAgent(dir, path, now)
	if err != nil {
		return err
	}
	return s.Child.crashLoop()
}

// CheckSession is Check for session name of an agent in sessions mode:
// nil when the agent is healthy, as Check says but for a child, and the
// session is open and its child not in a crash loop.
func CheckSession(dir, path, name string, now time.Time) error {
	s, err := checkAgent(dir, path, now)
	if err != nil {
		return err
	}
	if s.Mode != ModeSessions {
		return fmt.Errorf("the agent is in %s mode: it has no sessions (-session needs -mode sessions)", s.Mode)
	}
	for _, sess := range s.Sessions {
		if sess.Name == name {
			if err := sess.Child.crashLoop(); err != nil {
				return fmt.Errorf("session %s: %w", name, err)
			}
			return nil
		}
	}
	return fmt.Errorf("session %s is not open", name)
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

// crashLoop reports a child in a crash loop, as the agent decided it
// (ChildStatus.CrashLoop): health does not judge the runs itself, so
// that the rule lives in one place, the supervisor's, and holds for
// every child the file describes.
func (c ChildStatus) crashLoop() error {
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
