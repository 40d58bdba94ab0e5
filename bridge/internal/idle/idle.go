//go:build linux

// Package idle tells how long the agent has had nothing to do, for
// -idle-timeout, and stops it once that was long enough.
package idle

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells how long the agent has had nothing to do, for
// -idle-timeout: the time of the last activity (an input byte in stream
// mode; a request line read, or a request's tree gone, in exec mode). Its
// methods are safe from any goroutine.
type Clock struct {
	last atomic.Int64 // UnixNano of the last activity
}

// NewClock returns a Clock whose last activity is now.
func NewClock() *Clock {
	c := &Clock{}
	c.Touch()
	return c
}

// Touch records activity now.
func (c *Clock) Touch() { c.last.Store(time.Now().UnixNano()) }

// since is how long ago the last activity was.
func (c *Clock) since() time.Duration {
	return time.Since(time.Unix(0, c.last.Load()))
}

// StopWhenIdle returns a context that is done when ctx is, or once the
// agent was idle for d: nothing recorded on c for d while busy (if set)
// reported false. The returned func ends the watch and waits for it. With
// d zero, nothing is watched.
func (c *Clock) StopWhenIdle(ctx context.Context, d time.Duration, log *slog.Logger, busy func() bool) (context.Context, func()) {
	if d <= 0 {
		return ctx, func() {}
	}
	ctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			idle := c.since()
			if idle >= d && (busy == nil || !busy()) {
				log.Info("idle: stopping as on TERM", "idle_timeout", d)
				stop()
				return
			}
			// Active since: look again when d has passed since the
			// activity. Busy: the work's end is activity, so looking
			// again in d is soon enough.
			if idle < d {
				t.Reset(d - idle)
			} else {
				t.Reset(d)
			}
		}
	}()
	return ctx, func() { stop(); wg.Wait() }
}
