//go:build linux

package config

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/fifobridge/fifobridge/turn"
)

// Setting is one flag of `fifobridge run`: its name (the environment's
// FIFOBRIDGE_<NAME> too), its default as the flag package prints it, its
// usage line, and the field of a Run it parses into. Whatever a field
// needs beyond its type's parse is checked or derived in Finish.
type Setting struct {
	Name, Default, Usage string
	// field is the setting's field of r: a *string, *bool, *int or
	// *time.Duration, parsed as the flag package parses them, or a
	// flag.Value.
	field func(r *Run) any
}

// Settings are the flags of `fifobridge run`, in the order -h lists them.
// Adding a flag is one entry here and one field of Run (and where Finish
// checks it, and an engine reads it).
var Settings = []Setting{
	{"dir", "/run/fifobridge", "directory of the FIFOs, the status file and replies/", func(r *Run) any { return &r.Dir }},
	{"in", "", "input FIFO path (default DIR/in)", func(r *Run) any { return &r.In }},
	{"out", "", "output FIFO path (default DIR/out)", func(r *Run) any { return &r.Out }},
	{"create", "true", "create the directory and missing FIFOs, remove on exit those created; false: wait until both exist", func(r *Run) any { return &r.Create }},
	{"perm", "0660", "who may use the FIFOs it creates: write the input FIFOs, read the output FIFO (0660: in 0620, out 0640)", func(r *Run) any { return (*modeValue)(&r.Perm) }},
	{"mode", "stream", "stream: one long-lived child; exec: one child per request; sessions: named stream children opened and closed from the host", func(r *Run) any { return &r.Mode }},
	{"restart", "on-failure", "stream and sessions mode: never, on-failure or always", func(r *Run) any { return &r.Given.Restart }},
	{"max-restarts", "5", "give up after this many restarts inside -restart-window (negative: never give up)", func(r *Run) any { return &r.MaxRestarts }},
	{"restart-window", "1m0s", "window for -max-restarts; a child that ran longer resets the backoff", func(r *Run) any { return &r.RestartWindow }},
	{"backoff-min", "100ms", "first restart delay", func(r *Run) any { return &r.BackoffMin }},
	{"backoff-max", "30s", "largest restart delay", func(r *Run) any { return &r.BackoffMax }},
	{"stop-signal", "", "signal that asks a child to stop (default TERM; HUP with -tty or -prompt)", func(r *Run) any { return &r.Given.StopSignal }},
	{"stop-timeout", "10s", "time from the stop signal to SIGKILL", func(r *Run) any { return &r.StopTimeout }},
	{"cgroup", "auto", "auto, off, or a cgroup v2 directory: each child gets its own cgroup there", func(r *Run) any { return &r.Cgroup }},
	{"timeout", "0s", "exec mode: default per-request limit (0: none)", func(r *Run) any { return &r.Timeout }},
	{"max-concurrent", "4", "exec mode: children running at once", func(r *Run) any { return &r.MaxConcurrent }},
	{"max-request", "1048576", "largest request line accepted", func(r *Run) any { return (*sizeValue)(&r.MaxRequest) }},
	{"allow-args", "false", "exec mode: let requests append args to PROGRAM's argv; sessions mode: let open give its own PROGRAM, args, env and cwd (PROGRAM may then be left out)", func(r *Run) any { return &r.AllowArgs }},
	{"status", "", "status file (default DIR/status.json)", func(r *Run) any { return &r.StatusPath }},
	{"log-format", "text", "text or json", func(r *Run) any { return &r.LogFormat }},
	{"log-level", "info", "debug, info, warn or error", func(r *Run) any { return &r.LogLevel }},
	{"user", "", "run children as UID[:GID] (numbers or names), no supplementary groups; the agent stays root", func(r *Run) any { return &r.Given.User }},
	// Terminal mode.
	{"tty", "false", "stream and sessions mode: run the child on a new pseudo-terminal", func(r *Run) any { return &r.Tty }},
	{"tty-size", "80x24", "window size COLSxROWS of -tty's terminal at start (DIR/winsize changes it)", func(r *Run) any { return &r.Given.TtySize }},
	// The host side: idle exit, exit code mapping, the container log.
	{"idle-timeout", "0s", "stop as on TERM after this long with no input byte (stream), no request queued or running (exec) or no session open (sessions); 0: never", func(r *Run) any { return &r.IdleTimeout }},
	{"exit-map", "", "FROM=TO[,FROM=TO...]: exit with TO where the code would be FROM (e.g. 143=0)", func(r *Run) any { return &r.ExitMap }},
	{"tee", "false", "stream and sessions mode: also copy the child's output to the agent's stdout, dropping what stdout cannot take", func(r *Run) any { return &r.Tee }},
	{"prompt", "", "stream and sessions mode: the child's prompt, a regular expression; serves DIR/ask, one turn at a time", func(r *Run) any { return &r.Given.Prompt }},
	{"stderr", "log", "plain stream and sessions mode: log (the child's stderr is the agent's) or out (the same pipe as its stdout)", func(r *Run) any { return &r.Given.Stderr }},
	{"continuation", "", "with -prompt: the child's continuation prompt (a regular expression): after the whole input it ends the turn as incomplete", func(r *Run) any { return &r.Given.Continuation }},
	{"settle", turn.DefaultSettle.String(), "with -prompt: how long the output stays quiet after a prompt before the child counts as ready (0: at once)", func(r *Run) any { return &r.Settle }},
	// Sessions mode.
	{"max-sessions", "16", "sessions mode: sessions open at once", func(r *Run) any { return &r.MaxSessions }},
	{"session-idle", "0s", "sessions mode: close a session after this long with no input byte and no ask (0: never)", func(r *Run) any { return &r.SessionIdle }},
	{"allow-users", "", "sessions mode: the users (names or UIDs, comma-separated) that open -user may choose", func(r *Run) any { return &r.Given.AllowUsers }},
}

// Define defines every setting's flag on fs, each parsing into r and each
// set to its default now.
func (r *Run) Define(fs *flag.FlagSet) {
	for i := range Settings {
		Settings[i].define(fs, r)
	}
}

// define defines s on fs, parsing into r. A default its field cannot take
// is a mistake in Settings: it panics, and the package's tests see it.
func (s *Setting) define(fs *flag.FlagSet, r *Run) {
	bad := func(err error) {
		panic(fmt.Sprintf("config: default %q of -%s: %v", s.Default, s.Name, err))
	}
	switch p := s.field(r).(type) {
	case *string:
		fs.StringVar(p, s.Name, s.Default, s.Usage)
	case *bool:
		v, err := strconv.ParseBool(s.Default)
		if err != nil {
			bad(err)
		}
		fs.BoolVar(p, s.Name, v, s.Usage)
	case *int:
		v, err := strconv.Atoi(s.Default)
		if err != nil {
			bad(err)
		}
		fs.IntVar(p, s.Name, v, s.Usage)
	case *time.Duration:
		v, err := time.ParseDuration(s.Default)
		if err != nil {
			bad(err)
		}
		fs.DurationVar(p, s.Name, v, s.Usage)
	case flag.Value:
		if s.Default != "" {
			if err := p.Set(s.Default); err != nil {
				bad(err)
			}
		}
		fs.Var(p, s.Name, s.Usage)
	default:
		panic(fmt.Sprintf("config: -%s has a field of type %T", s.Name, p))
	}
}
