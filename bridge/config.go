//go:build linux

package bridge

import (
	"log/slog"
	"os"
	"regexp"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/tty"
)

// Config is everything `fifobridge run` is told.
type Config struct {
	Dir        string // holds replies/ in exec mode
	In, Out    string // FIFO paths
	StatusPath string
	Create     bool        // make missing FIFOs (and their directory); else wait for them
	Perm       os.FileMode // -perm: who may use the FIFOs made here (fifo.InputMode, fifo.OutputMode)

	Mode    string // "stream" or "exec"
	Program string
	Args    []string
	// Credential, if set, is the uid and gid children run as.
	Credential *syscall.Credential

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
	AllowArgs     bool
	// ReplySweep, if set, replaces both SweepPeriod and SweepAge (see
	// answer.Sweep). No flag sets it: the rule is fixed for users, and
	// only tests shorten it, through FIFOBRIDGE_TEST_REPLY_SWEEP.
	ReplySweep time.Duration

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
	// the child counts as ready (-settle): 0 is the default (20 ms),
	// turn.SettleAtOnce no time at all.
	Settle time.Duration

	Log *slog.Logger
	// Forward carries the signals to pass on to the children's process groups.
	Forward <-chan os.Signal

	// ProgramPath, if set, is Program already looked up.
	ProgramPath string
	// WorkDir, if set, is where children start.
	WorkDir string
	// Signals, if set, is the signal state children start with.
	Signals *child.SignalState
	// Terminal, if set, is the controlling terminal a stream child gets
	// the foreground of.
	Terminal *child.Terminal
}

// spec is how every child of cfg starts, less its stdio; cgroups, if
// set, gives each a cgroup of its own.
func (cfg *Config) spec(cgroups *cgroup.Manager) child.Spec {
	spec := child.Spec{
		Program: cfg.Program, Path: cfg.ProgramPath, Args: cfg.Args, Dir: cfg.WorkDir,
		Credential: cfg.Credential, Signals: cfg.Signals, Cgroups: cgroups,
	}
	if cfg.Credential != nil {
		spec.Env = child.UserEnv(os.Environ(), cfg.Credential.Uid)
	}
	return spec
}
