//go:build linux

package stream

import (
	"log/slog"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/fifobridge/fifobridge/sharedir"
)

// Config is what stream mode is told: the part of `fifobridge run`'s flags
// it serves, and the directories the agent opened for it.
type Config struct {
	// Child is how every child starts, less its stdio.
	Child child.Spec

	Restart       child.Policy
	MaxRestarts   int
	RestartWindow time.Duration
	BackoffMin    time.Duration
	BackoffMax    time.Duration
	StopSignal    syscall.Signal
	StopTimeout   time.Duration
	// IdleTimeout, if set, stops the engine as TERM does after this long
	// with no input byte and no ask waiting or in its turn.
	IdleTimeout time.Duration

	// Tty runs the child on a new pseudo-terminal of TtySize.
	Tty     bool
	TtySize tty.Winsize
	// Terminal, if set, is the controlling terminal a child gets the
	// foreground of.
	Terminal *child.Terminal
	// Tee copies the child's output to the agent's stdout too, best
	// effort: what stdout cannot take is dropped and counted.
	Tee bool
	// StderrOut makes a child on pipes write its stderr to the same pipe
	// as its stdout (-stderr out); otherwise its stderr is the agent's.
	StderrOut bool

	// Conversation, if set, makes the child a conversation (-prompt, see
	// package conversation): the turns are followed, DIR/ask is served,
	// and the output FIFO is a transcript that never holds the child
	// back. Stream mode sets its Terminal, StopTimeout, Log, Poke and
	// Activity from its own settings.
	Conversation *conversation.Config

	// Dir is DIR, where the terminal's winsize is; nil when it is
	// missing.
	Dir *sharedir.Dir

	Log *slog.Logger

	// FirstRun, if set, judges the first child as a session's open needs
	// (firstrun.go): a first run that ends with 127 or 126 within
	// FirstRun of its start, or with a conversation before the child was
	// ever ready, is a failed start. It is not restarted, and Run returns
	// a *FirstRunError that quotes the child's last line. Ready (see
	// events.go) says when the first child is past that.
	FirstRun time.Duration
}

// flushGrace bounds how long a stopping engine waits for a reader to take
// the last output of a child before it gives up on it, so that a stop is
// honoured within the stop timeout plus one second.
const flushGrace = 500 * time.Millisecond
