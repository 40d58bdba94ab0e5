//go:build linux

package execmode

import (
	"context"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
)

// sweep removes reply FIFOs left behind (see answer.Sweep) until ctx is
// done; a FIFO a queued, running or answered request holds is named.
func (e *Engine) sweep(ctx context.Context) {
	answer.Sweep(ctx, e.cfg.Log, e.replies, e.cfg.ReplySweep, e.named)
}

// named reports whether a queued, running or answered request holds the
// reply FIFO name.
func (e *Engine) named(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.replyNames[name] > 0
}
