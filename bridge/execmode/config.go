//go:build linux

package execmode

import (
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/sharedir"
)

// Config is what exec mode is told: the part of `fifobridge run`'s flags
// it serves, and the replies directory the agent opened for it.
type Config struct {
	// Child is how every child starts, less its stdio and the request's
	// args; Child.Path is PROGRAM as looked up at start, or "".
	Child child.Spec

	Timeout       time.Duration // a request's limit, unless it sets its own
	MaxConcurrent int
	MaxRequest    int // bytes in a request line
	AllowArgs     bool
	StopSignal    syscall.Signal
	StopTimeout   time.Duration
	// IdleTimeout, if set, stops the engine as TERM does after this long
	// with no request queued or running.
	IdleTimeout time.Duration
	// ReplySweep, if set, replaces the reply sweep's period and age (see
	// answer.Sweep); tests only.
	ReplySweep time.Duration

	// Replies is DIR/replies, or nil when there is none.
	Replies *sharedir.Dir

	Log *slog.Logger
	// Forward carries the signals to pass on to every running child's
	// process group.
	Forward <-chan os.Signal
}
