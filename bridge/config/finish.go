//go:build linux

package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/fifobridge/fifobridge/turn"
)

// ErrNoProgram is Finish's error without PROGRAM. In a container the
// image's entrypoint is "fifobridge run --", so the hint names the place
// a docker run takes it.
var ErrNoProgram = errors.New("no PROGRAM given: put it after --, as in fifobridge run [flags] -- PROGRAM [ARG...]; in a container, after the image name, as in docker run IMAGE my-cli")

// Finish checks r as the flags filled it, with Program set (refusing
// settings that contradict each other or are out of range, each in one
// line; only a sessions agent with -allow-args may have no Program), and
// derives what depends on others: the parsed -restart, -user, -allow-users,
// -stop-signal, -tty-size, -prompt and -continuation, -stderr, -settle 0
// as turn.SettleAtOnce, -in, -out and -status from DIR, and every path
// absolute from wd, which becomes the children's WorkDir.
func (r *Run) Finish(wd string) error {
	if err := r.check(); err != nil {
		return err
	}
	var err error
	if r.Restart, err = child.ParsePolicy(r.Given.Restart); err != nil {
		return fmt.Errorf("invalid -restart: %w", err)
	}
	if r.Given.User != "" {
		if r.Credential, err = child.ParseUser(r.Given.User); err != nil {
			return fmt.Errorf("invalid -user: %w", err)
		}
	}
	if err := r.parseAllowUsers(); err != nil {
		return err
	}
	r.StderrOut = r.Given.Stderr == "out"
	if err := r.deriveChild(); err != nil {
		return err
	}
	r.paths(wd)
	return nil
}

// check refuses settings that contradict each other or are out of range.
func (r *Run) check() error {
	mode, stream := r.Mode, r.Mode == "stream" || r.Mode == "sessions"
	g := &r.Given
	switch {
	case mode != "stream" && mode != "exec" && mode != "sessions":
		return fmt.Errorf("invalid -mode %q: want stream, exec or sessions", mode)
	case r.Tty && !stream:
		return fmt.Errorf("invalid -tty: a terminal is for stream or sessions mode, not -mode exec")
	case r.RestartWindow <= 0, r.BackoffMin <= 0, r.BackoffMax < r.BackoffMin:
		return fmt.Errorf("invalid restart timing: want -restart-window > 0 and 0 < -backoff-min <= -backoff-max")
	case r.StopTimeout < 0, r.Timeout < 0, r.IdleTimeout < 0, r.SessionIdle < 0:
		return fmt.Errorf("invalid duration: -stop-timeout, -timeout, -idle-timeout and -session-idle must not be negative")
	case r.Tee && !stream:
		return fmt.Errorf("invalid -tee: it copies a stream child's output, and -mode is %s", mode)
	case g.Stderr != "log" && g.Stderr != "out":
		return fmt.Errorf("invalid -stderr %q: want log or out", g.Stderr)
	case g.Stderr == "out" && !stream:
		return fmt.Errorf("invalid -stderr out: it joins a stream child's stderr to its stdout, and -mode is %s (exec frames carry stderr apart)", mode)
	case r.MaxConcurrent < 1:
		return fmt.Errorf("invalid -max-concurrent %d: want at least 1", r.MaxConcurrent)
	case r.MaxSessions < 1:
		return fmt.Errorf("invalid -max-sessions %d: want at least 1", r.MaxSessions)
	case g.Prompt != "" && !stream:
		return fmt.Errorf("invalid -prompt: conversations are for stream and sessions mode, and -mode is %s", mode)
	case r.Settle < 0:
		return fmt.Errorf("invalid -settle %v: want 0 (at once) or more", r.Settle)
	case r.Program == "" && !(mode == "sessions" && r.AllowArgs):
		// A sessions agent with -allow-args may leave PROGRAM to each
		// open.
		return ErrNoProgram
	}
	return nil
}

// deriveChild derives what follows a child's terminal and prompt, from
// Given: the stop signal (unless given), the terminal's size and the
// conversation. A session's Run derives it again from its own.
func (r *Run) deriveChild() error {
	g := &r.Given
	if g.Continuation != "" && g.Prompt == "" {
		return fmt.Errorf("invalid -continuation: it is the continuation of -prompt's prompt, and -prompt is not given")
	}
	sig := g.StopSignal
	if !g.Explicit() {
		// HUP for an interactive child, one on a terminal or in a
		// conversation: interactive shells ignore TERM, on pipes too,
		// and a hangup is what a terminal's session gets when it goes.
		sig = "TERM"
		if r.Tty || g.Prompt != "" {
			sig = "HUP"
		}
	}
	var err error
	if r.StopSignal, err = child.ParseSignal(sig); err != nil {
		return fmt.Errorf("invalid -stop-signal: %w", err)
	}
	if r.TtySize, err = tty.ParseWinsize(g.TtySize); err != nil {
		return fmt.Errorf("invalid -tty-size: %w", err)
	}
	r.Prompt, r.Continuation = nil, nil
	if g.Prompt == "" {
		return nil
	}
	if r.Prompt, err = compile("-prompt", g.Prompt); err != nil {
		return err
	}
	if g.Continuation != "" {
		if r.Continuation, err = compile("-continuation", g.Continuation); err != nil {
			return err
		}
	}
	if r.Settle == 0 {
		r.Settle = turn.SettleAtOnce
	}
	return nil
}

// compile compiles the expression of flag, or says in one line why not:
// the expression is quoted, as it may hold a newline.
func compile(flag, expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(expr)
	if err == nil {
		return re, nil
	}
	var rerr *syntax.Error
	if errors.As(err, &rerr) {
		return nil, fmt.Errorf("invalid %s %q: %s", flag, expr, rerr.Code)
	}
	return nil, fmt.Errorf("invalid %s %q: %s", flag, expr, strings.ReplaceAll(err.Error(), "\n", " "))
}

// paths sets -in, -out and -status from DIR where not given, makes every
// path absolute from wd, and records wd as where children start, so that
// the agent may leave it (see procinit.LeaveWorkDir).
func (r *Run) paths(wd string) {
	if r.In == "" {
		r.In = filepath.Join(r.Dir, "in")
	}
	if r.Out == "" {
		r.Out = filepath.Join(r.Dir, "out")
	}
	if r.StatusPath == "" {
		r.StatusPath = filepath.Join(r.Dir, "status.json")
	}
	r.WorkDir = wd
	for _, p := range []*string{&r.Dir, &r.In, &r.Out, &r.StatusPath} {
		if !filepath.IsAbs(*p) {
			*p = filepath.Join(wd, *p)
		}
	}
}
