//go:build linux

package sessions

import (
	"log/slog"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/bridge/stream"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// Config is what sessions mode is told: the part of `fifobridge run`'s
// flags it serves, the directories the agent opened for it, and how a
// session's stream settings are made from an open line.
type Config struct {
	// MaxSessions is how many sessions may be open at once (-max-sessions).
	MaxSessions int
	// SessionIdle, if set, closes a session after this long with no input
	// byte and no ask (-session-idle).
	SessionIdle time.Duration
	// StopTimeout is -stop-timeout: the patience with a reply reader that
	// takes nothing, and the stop's deadline (package bound).
	StopTimeout time.Duration
	// IdleTimeout, if set, stops the engine as TERM does after this long
	// with no session open and no control line (-idle-timeout).
	IdleTimeout time.Duration
	// MaxRequest bounds a control line, in bytes.
	MaxRequest int
	// ReplySweep, if set, replaces the reply sweep's period and age (see
	// answer.Sweep); tests only.
	ReplySweep time.Duration

	// Sessions is DIR/sessions, made by the agent; Replies is
	// DIR/replies.
	Sessions, Replies *sharedir.Dir
	// Perm is -perm: a session's in and ask get fifo.InputMode(Perm), its
	// out fifo.OutputMode(Perm).
	Perm os.FileMode

	Log *slog.Logger
	// Forward carries the signals to pass on to every session.
	Forward <-chan os.Signal

	// Stream returns the stream settings of a new session from its open
	// line (the run's settings as the line overrides them) and its files'
	// directory, or the one-line error of a refused open (125). The
	// engine sets what is its own: the directory, the conversation's
	// FIFOs, -session-idle, the signals, the log.
	Stream func(ctl protocol.ParsedControl, files *sharedir.Dir) (*stream.Config, error)
	// Flush, if set, rewrites the status file now, and returns once it
	// is written: an open is answered once the file lists its session, a
	// close once it no longer does, so that `health -session` after
	// either says what the answer said.
	Flush func()
}
