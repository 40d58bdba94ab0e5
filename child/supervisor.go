//go:build linux

package child

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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
	// RecentRestarts counts the restarts inside the last Window.
	RecentRestarts int
	// QuickExits counts the runs in a row that each ended within Window;
	// CrashLoop says the child is in a crash loop: from the third such
	// run, through its backoffs, until the current child has run for
	// 10 s, or a whole Window when that is shorter.
	QuickExits int
	CrashLoop  bool
	LastExit   *ExitStatus
	LastAt     time.Time // when the last child exited
}

// Supervisor keeps one child running: it starts it, cleans up its tree when
// it ends, and restarts it by Policy with a doubling backoff, giving up after
// MaxRestarts restarts within Window. Its Snapshot says when the child is
// in a crash loop (see crashLoop), and Changed is called when a child
// leaves one by running long enough, so that a status file says so at
// once.
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
	// GiveUp, if set, is asked about each child that ended by itself (no
	// stop came), with its status and how long it ran, once its tree is
	// gone and before Exited: true means no restart, whatever Policy
	// says (a session's first run that could not find its program).
	GiveUp func(p *Process, st ExitStatus, ran time.Duration) bool

	Policy      Policy
	MaxRestarts int // negative: no limit
	Window      time.Duration
	BackoffMin  time.Duration
	BackoffMax  time.Duration
	StopSignal  syscall.Signal
	StopTimeout time.Duration

	mu     sync.Mutex
	snap   Snapshot
	cur    *Process
	recent []time.Time // restart times, the oldest first; those past Window are dropped at each exit
	loop   crashLoop
}

// Run supervises until the child ends and is not restarted, or until ctx is
// done, which stops the child (StopSignal, SIGKILL after StopTimeout). It
// returns the last child's exit status, or the error of a failed start.
func (s *Supervisor) Run(ctx context.Context) (ExitStatus, error) {
	s.setState(StateStarting)
	s.mu.Lock()
	s.loop.window = s.Window
	s.mu.Unlock()
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

		st, at := s.await(ctx, p)
		s.ended(st, at)
		s.Log.Info("child exited", "pid", p.Pid, "status", st.String())
		restart := ctx.Err() == nil && !s.givesUp(p, st, at) && s.Policy.restarts(st) && s.mayRestart(p, st, &delay)
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
		delay = min(2*delay, s.BackoffMax)
		s.mu.Lock()
		s.recent = append(s.recent, time.Now())
		s.snap.Restarts++
		s.mu.Unlock()
	}
}

// await waits until p exits, or until ctx is done, which stops it, and
// returns its status and when it ended, once the rest of its tree is
// stopped. While p runs in a crash loop it calls Changed when p has run
// long enough to leave it.
func (s *Supervisor) await(ctx context.Context, p *Process) (ExitStatus, time.Time) {
	s.mu.Lock()
	leaves := s.loop.leavesIn(time.Now())
	s.mu.Unlock()
	var settled <-chan time.Time
	if leaves > 0 {
		t := time.NewTimer(leaves)
		defer t.Stop()
		settled = t.C
	}
	for {
		select {
		case <-settled:
			settled = nil
			s.changed()
		case <-p.Done():
			at := time.Now()
			if s.Hangup != nil {
				s.Hangup(p)
			}
			return s.Reaper.Stop(p, s.StopSignal, s.StopTimeout), at // the rest of its tree
		case <-ctx.Done():
			s.setState(StateStopping)
			s.Log.Info("stopping child", "pid", p.Pid, "signal", SignalName(s.StopSignal), "timeout", s.StopTimeout)
			return s.Reaper.Stop(p, s.StopSignal, s.StopTimeout), time.Now()
		}
	}
}

// givesUp asks GiveUp about p, which ended by itself at at with st.
func (s *Supervisor) givesUp(p *Process, st ExitStatus, at time.Time) bool {
	return s.GiveUp != nil && s.GiveUp(p, st, at.Sub(p.Started))
}

// mayRestart drops the restart times that left Window and says whether
// MaxRestarts allows one more; delay goes back to BackoffMin when p ran
// longer than Window (it counts as healthy).
func (s *Supervisor) mayRestart(p *Process, st ExitStatus, delay *time.Duration) bool {
	now := time.Now()
	if now.Sub(p.Started) > s.Window {
		*delay = s.BackoffMin
	}
	s.mu.Lock()
	s.recent = s.inWindow(now)
	recent := len(s.recent)
	s.mu.Unlock()
	if s.MaxRestarts >= 0 && recent >= s.MaxRestarts {
		s.Log.Error("giving up: too many restarts", "restarts", recent, "window", s.Window, "status", st.String())
		return false
	}
	return true
}

// Signal forwards sig to the running child's process group, if any. It
// returns os.ErrProcessDone when there is none: no child, or one already
// reaped (see Process.Signal), whose group is not signaled then.
func (s *Supervisor) Signal(sig syscall.Signal) error {
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	if p == nil {
		return os.ErrProcessDone
	}
	err := p.Signal(sig)
	if err == nil {
		s.Log.Info("forwarded signal", "signal", SignalName(sig), "pid", p.Pid)
	}
	return err
}

// Snapshot returns the Supervisor's state now.
func (s *Supervisor) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snap
	now := time.Now()
	snap.RecentRestarts = len(s.inWindow(now))
	snap.QuickExits, snap.CrashLoop = s.loop.quick, s.loop.in(now)
	return snap
}

// inWindow returns the tail of s.recent that is inside Window at now;
// s.mu is held.
func (s *Supervisor) inWindow(now time.Time) []time.Time {
	for i, t := range s.recent {
		if now.Sub(t) < s.Window {
			return s.recent[i:]
		}
	}
	return s.recent[:0]
}

func (s *Supervisor) setState(st State) {
	s.mu.Lock()
	s.snap.State = st
	s.mu.Unlock()
	s.changed()
}

func (s *Supervisor) changed() {
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
	s.loop.start(p.Started)
	s.mu.Unlock()
	s.changed()
}

// ended records the status of the child that ended at at.
func (s *Supervisor) ended(st ExitStatus, at time.Time) {
	s.mu.Lock()
	s.cur = nil
	s.snap.Pid = 0
	s.snap.LastExit = &st
	s.snap.LastAt = at
	s.loop.exit(at)
	s.mu.Unlock()
	s.changed()
}
