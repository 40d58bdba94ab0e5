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
// dir/lock, its state is running or backoff, and its child has been
// restarted fewer than CrashLoop times inside -restart-window. The pid in
// the file is not
// consulted: it means nothing in another PID namespace (a host checking a
// container's directory), where the lock still tells, at once, that the
// agent is gone.
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
	if n := s.Child.RecentRestarts; n >= CrashLoop {
		return fmt.Errorf("crash loop: %d restarts within -restart-window (%s)", n, orUnknown(s.Child.RestartWindow))
	}
	return nil
}

// CrashLoop is the number of restarts inside -restart-window from which
// the agent is unhealthy, whether its child runs or waits to restart: a
// child that keeps dying is not a healthy service, as Kubernetes'
// CrashLoopBackOff says. Once the restarts fall out of the window, the
// agent is healthy again.
const CrashLoop = 3

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
