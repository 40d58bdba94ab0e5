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
	s, err := Read(path)
	if err != nil {
		return err
	}
	alive, err := AgentAlive(dir)
	if err != nil {
		return err
	}
	if !alive {
		return fmt.Errorf("the agent is gone: nothing holds %s", filepath.Join(dir, LockName))
	}
	age := now.Sub(s.UpdatedAt)
	if age > Stale {
		return fmt.Errorf("status is stale: last updated %s ago (limit %s)", age.Round(time.Second), Stale)
	}
	if age < -Stale {
		return fmt.Errorf("status is from the future: updated_at %s", s.UpdatedAt.Format(time.RFC3339))
	}
	if s.State != "running" && s.State != "backoff" {
		return fmt.Errorf("agent state is %q", s.State)
	}
	return s.Child.crashLoop()
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
