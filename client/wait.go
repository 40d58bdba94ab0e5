//go:build linux

package client

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
)

// waitPoll is how often WaitServing looks for an agent.
const waitPoll = 50 * time.Millisecond

// WaitServing waits at most d, or until ctx is done, for an agent to read
// DIR/in, as a send to a container that is still starting does. It reports
// whether one does; Send then fails or succeeds as usual.
func WaitServing(ctx context.Context, dir string, d time.Duration) bool {
	return waitReader(ctx, filepath.Join(dir, "in"), d)
}

// WaitAsking is WaitServing for ask: it waits for an agent to read
// DIR/ask.
func WaitAsking(ctx context.Context, dir string, d time.Duration) bool {
	return waitReader(ctx, filepath.Join(dir, "ask"), d)
}

// WaitSessionAsking is WaitAsking for session name: it waits for an
// agent to read DIR/sessions/NAME/ask, as an ask of a session that
// another script opens waits for it. A name that could name no session
// is not waited for.
func WaitSessionAsking(ctx context.Context, dir, name string, d time.Duration) bool {
	if checkSessionName(name) != nil {
		return false
	}
	return waitReader(ctx, filepath.Join(dir, sessionsName, name, askName), d)
}

// waitReader waits at most d, or until ctx is done, for a reader of the
// FIFO at in.
func waitReader(ctx context.Context, in string, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	for {
		if w, err := fifo.OpenWriterNow(in); err == nil {
			w.Close()
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
}
