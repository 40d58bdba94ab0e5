package status

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Stale is the age past which a status file no longer shows a healthy agent.
const Stale = 15 * time.Second

// Check reports why the agent whose status file is at path is not
// healthy, or nil when it is: the status is fresh, its pid is alive and its
// state is running or backoff.
func Check(path string, now time.Time) error {
	s, err := Read(path)
	if err != nil {
		return err
	}
	age := now.Sub(s.UpdatedAt)
	if age > Stale {
		return fmt.Errorf("status is stale: last updated %s ago (limit %s)", age.Round(time.Second), Stale)
	}
	if age < -Stale {
		return fmt.Errorf("status is from the future: updated_at %s", s.UpdatedAt.Format(time.RFC3339))
	}
	if s.PID <= 0 {
		return fmt.Errorf("status names no pid")
	}
	if err := syscall.Kill(s.PID, 0); errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("agent pid %d is not running", s.PID)
	}
	if s.State != "running" && s.State != "backoff" {
		return fmt.Errorf("agent state is %q", s.State)
	}
	return nil
}
