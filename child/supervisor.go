package child

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"
)

// Policy says when a supervised child that exited is started again.
type Policy int

const (
	// RestartOnFailure restarts after a non-zero exit or death by signal.
	RestartOnFailure Policy = iota
	// RestartNever never restarts.
	RestartNever
	// RestartAlways restarts after every exit.
	RestartAlways
)

// ParsePolicy accepts "never", "on-failure" and "always".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "on-failure":
		return RestartOnFailure, nil
	case "never":
		return RestartNever, nil
	case "always":
		return RestartAlways, nil
	}
	return 0, fmt.Errorf("parse restart policy %q: want never, on-failure or always", s)
}

func (p Policy) String() string {
	return [...]string{"on-failure", "never", "always"}[p]
}

func (p Policy) restarts(s ExitStatus) bool {
	switch p {
	case RestartAlways:
		return true
	case RestartOnFailure:
		return !s.Success()
	}
	return false
}

// State is where a Supervisor is in its life.
type State string

const (
	StateStarting State = "starting"
	StateRunning  State = "running"
	StateBackoff  State = "backoff"
	StateStopping State = "stopping"
	StateStopped  State = "stopped"
)

// Snapshot is what a Supervisor reports about itself.
type Snapshot struct {
	State    State
	Pid      int // the running child, or 0
	Starts   int
	Restarts int
	LastExit *ExitStatus
	LastAt   time.Time
}

// Supervisor keeps one child running: it starts it, cleans up its tree when
// it ends, and restarts it by Policy with a doubling backoff, giving up after
// MaxRestarts restarts within Window.
type Supervisor struct {
	Reaper *Reaper
	Log    *slog.Logger

	// Start starts one child, wiring it as the caller needs.
	Start func() (*Process, error)
	// Exited, if set, is called after a child and its whole tree are gone
	// and before any restart; the caller unwires the child here. last says
	// that no restart follows: the child ended for good, or a stop came.
	Exited func(p *Process, last bool)
	// Changed, if set, is called after the Snapshot changed.
	Changed func()
	// Hangup, if set, is called when a child exited by itself, before the
	// rest of its tree is stopped (a terminal child's session gets SIGHUP).
	Hangup func(p *Process)

	Policy      Policy
	MaxRestarts int // negative: no limit
	Window      time.Duration
	BackoffMin  time.Duration
	BackoffMax  time.Duration
	StopSignal  syscall.Signal
	StopTimeout time.Duration

	mu   sync.Mutex
	snap Snapshot
	cur  *Process
}

// Run supervises until the child ends and is not restarted, or until ctx is
// done, which stops the child (StopSignal, SIGKILL after StopTimeout). It
// returns the last child's exit status, or the error of a failed start.
func (s *Supervisor) Run(ctx context.Context) (ExitStatus, error) {
	s.setState(StateStarting)
	var restarts []time.Time // restart times inside the window
	delay := s.BackoffMin
	for {
		if ctx.Err() != nil { // a stop came before the first start
			s.setState(StateStopped)
			return ExitStatus{}, nil
		}
		p, err := s.Start()
		if err != nil {
			s.setState(StateStopped)
			return ExitStatus{}, err
		}
		s.started(p)
		s.Log.Info("child started", "pid", p.Pid)

		var st ExitStatus
		select {
		case <-p.Done():
			if s.Hangup != nil {
				s.Hangup(p)
			}
			st = s.Reaper.Stop(p, s.StopSignal, s.StopTimeout) // the rest of its tree
		case <-ctx.Done():
			s.setState(StateStopping)
			s.Log.Info("stopping child", "pid", p.Pid, "signal", SignalName(s.StopSignal), "timeout", s.StopTimeout)
			st = s.Reaper.Stop(p, s.StopSignal, s.StopTimeout)
		}
		s.ended(p, st)
		s.Log.Info("child exited", "pid", p.Pid, "status", st.String())
		restart := ctx.Err() == nil && s.Policy.restarts(st)
		if restart {
			restarts = s.inWindow(restarts, p.Started, &delay)
			if s.MaxRestarts >= 0 && len(restarts) >= s.MaxRestarts {
				s.Log.Error("giving up: too many restarts", "restarts", len(restarts), "window", s.Window, "status", st.String())
				restart = false
			}
		}
		if !restart {
			s.setState(StateStopping) // what is left is the caller's clean-up
		}
		if s.Exited != nil {
			s.Exited(p, !restart)
		}
		if !restart {
			s.setState(StateStopped)
			return st, nil
		}

		s.setState(StateBackoff)
		s.Log.Info("restarting child", "in", delay, "policy", s.Policy.String())
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			s.setState(StateStopped)
			return st, nil
		case <-t.C:
		}
		restarts = append(restarts, time.Now())
		delay = min(2*delay, s.BackoffMax)
		s.mu.Lock()
		s.snap.Restarts++
		s.mu.Unlock()
	}
}

// inWindow returns the restart times still inside Window, and resets delay
// to BackoffMin when the child that started at started ran longer than
// Window (it counts as healthy).
func (s *Supervisor) inWindow(restarts []time.Time, started time.Time, delay *time.Duration) []time.Time {
	now := time.Now()
	if now.Sub(started) > s.Window {
		*delay = s.BackoffMin
	}
	kept := restarts[:0]
	for _, t := range restarts {
		if now.Sub(t) < s.Window {
			kept = append(kept, t)
		}
	}
	return kept
}

// Signal forwards sig to the running child's process group, if any.
func (s *Supervisor) Signal(sig syscall.Signal) {
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	if p != nil {
		if err := p.Signal(sig); err == nil {
			s.Log.Info("forwarded signal", "signal", SignalName(sig), "pid", p.Pid)
		}
	}
}

// Snapshot returns the Supervisor's state now.
func (s *Supervisor) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

func (s *Supervisor) setState(st State) {
	s.mu.Lock()
	s.snap.State = st
	s.mu.Unlock()
	if s.Changed != nil {
		s.Changed()
	}
}

func (s *Supervisor) started(p *Process) {
	s.mu.Lock()
	s.cur = p
	s.snap.Pid = p.Pid
	s.snap.Starts++
	if s.snap.State != StateStopping {
		s.snap.State = StateRunning
	}
	s.mu.Unlock()
	if s.Changed != nil {
		s.Changed()
	}
}

func (s *Supervisor) ended(p *Process, st ExitStatus) {
	s.mu.Lock()
	s.cur = nil
	s.snap.Pid = 0
	s.snap.LastExit = &st
	s.snap.LastAt = time.Now()
	s.mu.Unlock()
	if s.Changed != nil {
		s.Changed()
	}
}
