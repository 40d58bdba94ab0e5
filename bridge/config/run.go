//go:build linux

// Package config is the run configuration of `fifobridge run`: one value,
// Run, that the flags and FIFOBRIDGE_<NAME> environment fill (through the
// one table Settings), that an open line of sessions mode overrides for
// one session (Run.Session), and from which every engine's own settings
// are built (Run.Spec, Run.Exec, Run.Entry).
//
// Guarantees: every run flag is one entry of Settings and nothing else
// defines one; Finish is the one place that checks a Run and derives its
// dependent defaults, and Session derives a session's the same way; a
// session's Run is a copy, and the run's value is never changed by it;
// Entry is the one place a stream child's settings are put together,
// stream mode's (from the empty open line) and each session's (from its
// open line) alike.
package config

import (
	"log/slog"
	"os"
	"regexp"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/tty"
)

// Run is everything `fifobridge run` is told. The flags fill it (Define),
// Finish checks it and derives the rest; the fields after Log are set by
// the command at start, not by flags.
type Run struct {
	Dir        string // holds replies/ in exec mode
	In, Out    string // FIFO paths
	StatusPath string
	Create     bool        // make missing FIFOs (and their directory); else wait for them
	Perm       os.FileMode // -perm: who may use the FIFOs made here (fifo.InputMode, fifo.OutputMode)

	Mode    string // "stream", "exec" or "sessions"
	Program string
	// Args are PROGRAM's arguments, and in a session's Run the open
	// line's args after them.
	Args []string
	// Env, if set, adds to (and replaces in) the children's environment:
	// K=V each, an open line's env.
	Env []string
	// Credential, if set, is the uid and gid children run as.
	Credential *syscall.Credential
	// OwnUser says Credential is an open line's -user, chosen for one
	// session: HOME, USER and LOGNAME are its own (child.SessionEnv).
	OwnUser bool
	// AllowUsers are the users an open line may choose (-allow-users).
	AllowUsers []AllowedUser

	Restart       child.Policy
	MaxRestarts   int
	RestartWindow time.Duration
	BackoffMin    time.Duration
	BackoffMax    time.Duration
	StopSignal    syscall.Signal
	StopTimeout   time.Duration
	// Cgroup is -cgroup: "auto", "off" or a cgroup v2 directory.
	Cgroup string

	// Exec mode.
	Timeout       time.Duration
	MaxConcurrent int
	MaxRequest    int
	// AllowArgs lets exec requests append args, and open lines give args,
	// env and cwd.
	AllowArgs bool
	// ReplySweep, if set, replaces both SweepPeriod and SweepAge (see
	// answer.Sweep). No flag sets it: the rule is fixed for users, and
	// only tests shorten it, through FIFOBRIDGE_TEST_REPLY_SWEEP.
	ReplySweep time.Duration

	// Sessions mode: sessions open at once, and how long one may go
	// without an input byte or an ask before it is closed (0: forever).
	MaxSessions int
	SessionIdle time.Duration

	// Tty runs the stream child on a new pseudo-terminal of TtySize.
	Tty     bool
	TtySize tty.Winsize
	// IdleTimeout, if set, stops the agent as TERM does after this long
	// with no input byte (stream) or no request queued or running (exec).
	IdleTimeout time.Duration
	// Tee copies a stream child's output to the agent's stdout too, best
	// effort: what stdout cannot take is dropped and counted.
	Tee bool
	// StderrOut makes a plain stream child's stderr the same pipe as its
	// stdout (-stderr out), so its errors reach the output FIFO in its own
	// order; otherwise the child's stderr is the agent's.
	StderrOut bool
	// Prompt, if set, makes the stream child a conversation (-prompt): the
	// agent follows its turns, serves DIR/ask, and the output FIFO is a
	// transcript that never holds the child back (see package
	// conversation).
	Prompt *regexp.Regexp
	// Continuation, if set with Prompt, matches the child's continuation
	// prompt (-continuation): after the whole input, it ends a turn as
	// incomplete.
	Continuation *regexp.Regexp
	// Settle is how long the output must stay quiet after a prompt before
	// the child counts as ready (-settle); after Finish never 0:
	// turn.SettleAtOnce is no time at all.
	Settle time.Duration

	// LogFormat and LogLevel are -log-format and -log-level, for the
	// command to make Log from.
	LogFormat, LogLevel string
	// ExitMap is -exit-map, applied by the command to its exit code.
	ExitMap ExitMap

	// Given holds the settings Finish parses, as given.
	Given Given

	Log *slog.Logger
	// Forward carries the signals to pass on to the children's process groups.
	Forward <-chan os.Signal

	// ProgramPath, if set, is Program already looked up.
	ProgramPath string
	// WorkDir, if set, is where children start: the agent's start
	// directory, or an open line's cwd.
	WorkDir string
	// Signals, if set, is the signal state children start with.
	Signals *child.SignalState
	// Terminal, if set, is the controlling terminal a stream child gets
	// the foreground of.
	Terminal *child.Terminal
}

// Given is what the flags said of the settings that Finish parses, as
// text, so that a session's own tty, size, prompt and continuation derive
// again from the run's as the run's derived: StopSignal "" means the
// default (HUP with a terminal or a prompt, TERM otherwise).
type Given struct {
	Restart, StopSignal, User, TtySize string
	AllowUsers                         string
	Prompt, Continuation, Stderr       string
}

// Explicit reports whether -stop-signal was given; else the stop signal
// follows the child's terminal and prompt.
func (g *Given) Explicit() bool { return g.StopSignal != "" }
