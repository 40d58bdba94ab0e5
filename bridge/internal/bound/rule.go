//go:build linux

package bound

import (
	"sync"
	"time"
)

// ReaderPatience is the least time a blocked write waits for a reader
// that takes nothing before it is given up.
const ReaderPatience = time.Second

// StopGrace is how long after SIGKILL a stopping agent still waits for
// readers to take the last frames.
const StopGrace = 250 * time.Millisecond

// Patience is how long a write waits for a reader that takes nothing,
// for an agent run with -stop-timeout stopTimeout.
func Patience(stopTimeout time.Duration) time.Duration {
	return max(stopTimeout, ReaderPatience)
}

// Armer is a writer whose write under way a stop gives its deadline.
type Armer interface {
	ArmDeadline()
}

// Rule holds an engine's deadlines and applies the stop's one deadline to
// every Armer it watches. Its methods are safe from any goroutine.
type Rule struct {
	stopTimeout time.Duration
	patience    time.Duration

	mu      sync.Mutex
	killAt  time.Time // zero until a stop begins
	watched map[Armer]struct{}
}

// NewRule returns the rule of an agent run with -stop-timeout stopTimeout.
func NewRule(stopTimeout time.Duration) *Rule {
	return &Rule{stopTimeout: stopTimeout, patience: Patience(stopTimeout), watched: make(map[Armer]struct{})}
}

// Patience is how long a write waits for a reader that takes nothing.
func (r *Rule) Patience() time.Duration { return r.patience }

// Stop begins the stop, the first time it is called, and returns when the
// stop escalates to SIGKILL. From now on every write is given up at the
// deadline, those under way too.
func (r *Rule) Stop() time.Time {
	r.mu.Lock()
	if !r.killAt.IsZero() {
		defer r.mu.Unlock()
		return r.killAt
	}
	r.killAt = time.Now().Add(r.stopTimeout)
	watched := make([]Armer, 0, len(r.watched))
	for w := range r.watched {
		watched = append(watched, w)
	}
	killAt := r.killAt
	r.mu.Unlock()
	// Outside r.mu: a writer takes its own lock first, then r.mu.
	for _, w := range watched {
		w.ArmDeadline()
	}
	return killAt
}

// Deadline is when a stop gives every write up: -stop-timeout plus
// StopGrace after the stop began. It begins the stop if need be.
func (r *Rule) Deadline() time.Time { return r.Stop().Add(StopGrace) }

// Stopping reports whether a stop has begun.
func (r *Rule) Stopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.killAt.IsZero()
}

// WriteDeadline is the deadline of a write that begins now: the patience
// from now, and once a stop began, no later than the stop's deadline.
func (r *Rule) WriteDeadline() time.Time {
	d := time.Now().Add(r.patience)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.killAt.IsZero() {
		if stop := r.killAt.Add(StopGrace); stop.Before(d) {
			d = stop
		}
	}
	return d
}

// Watch registers w, so that a stop reaches its write under way; Forget
// undoes that.
func (r *Rule) Watch(w Armer) {
	r.mu.Lock()
	r.watched[w] = struct{}{}
	r.mu.Unlock()
}

// Forget undoes Watch.
func (r *Rule) Forget(w Armer) {
	r.mu.Lock()
	delete(r.watched, w)
	r.mu.Unlock()
}

// Watching returns how many writers are registered: tests check that
// every writer was closed.
func (r *Rule) Watching() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.watched)
}

// Expire waits for the stop's deadline and then calls giveUp; it returns
// at once when finished is closed first.
func (r *Rule) Expire(finished <-chan struct{}, giveUp func()) {
	t := time.NewTimer(time.Until(r.Deadline()))
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
		giveUp()
	}
}
