//go:build linux

package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fifobridge/fifobridge/protocol"
)

// errNeedAllowArgs is an open line's args, env or cwd on an agent
// without -allow-args.
var errNeedAllowArgs = errors.New("-arg, -env and -cwd need the agent's -allow-args")

// errNeedAllowArgsProgram is an open line's own PROGRAM on an agent
// without -allow-args.
var errNeedAllowArgsProgram = errors.New("a session's own PROGRAM (open NAME -- PROGRAM [ARG...]) needs the agent's -allow-args")

// errNoProgram is an open line without a PROGRAM of its own on an agent
// run with none.
var errNoProgram = errors.New("the agent was run with no PROGRAM: name the session's, as in fifobridge open NAME -- PROGRAM [ARG...]")

// Session returns the Run of one stream child (see Entry): a copy of r,
// the run's finished value, with what the open line c overrides (tty,
// size, prompt, continuation, PROGRAM and its arguments, args, env, cwd,
// user; what it leaves out keeps the run's), and derived again as Finish
// derives: the stop signal follows the session's own terminal and prompt
// unless -stop-signal was given. r is never changed. A size is checked,
// and used with a terminal only. A session with a PROGRAM or a user of
// its own has its PROGRAM looked up at each start, for its user
// (ProgramPath is empty). The error is one line, for the client to
// print (125).
func (r *Run) Session(c *protocol.ParsedControl) (*Run, error) {
	if (len(c.Args) > 0 || len(c.Env) > 0 || c.Cwd != "") && !r.AllowArgs {
		return nil, errNeedAllowArgs
	}
	s := *r
	s.Args = slices.Clone(r.Args)
	s.Env = slices.Clone(r.Env)
	if err := s.sessionProgram(c); err != nil {
		return nil, err
	}
	if c.Tty != nil {
		s.Tty = *c.Tty
	}
	if c.Size != "" {
		s.Given.TtySize = c.Size
	}
	if c.Prompt != nil {
		s.Given.Prompt = *c.Prompt
		if s.Given.Prompt == "" && c.Continuation == nil {
			// No conversation: the run's continuation goes with its prompt.
			s.Given.Continuation = ""
		}
	}
	if c.Continuation != nil {
		s.Given.Continuation = *c.Continuation
	}
	if err := s.sessionChild(c); err != nil {
		return nil, err
	}
	if err := s.deriveChild(); err != nil {
		return nil, sessionError(err)
	}
	return &s, nil
}

// sessionProgram sets r's PROGRAM and its arguments from c's own, and
// r's user from c's, each of which the run must allow.
func (r *Run) sessionProgram(c *protocol.ParsedControl) error {
	if c.User != "" {
		cred, err := r.sessionUser(c.User)
		if err != nil {
			return err
		}
		r.Credential, r.OwnUser, r.ProgramPath = cred, true, ""
	}
	if len(c.Command) == 0 {
		if r.Program == "" {
			return errNoProgram
		}
		return nil
	}
	if !r.AllowArgs {
		return errNeedAllowArgsProgram
	}
	if c.Command[0] == "" {
		return errors.New("invalid PROGRAM: it is empty")
	}
	for _, a := range c.Command {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("invalid PROGRAM or argument %q: it holds a NUL byte", a)
		}
	}
	r.Program, r.Args, r.ProgramPath = c.Command[0], slices.Clone(c.Command[1:]), ""
	return nil
}

// sessionChild adds c's args and env to r's and sets its cwd.
func (r *Run) sessionChild(c *protocol.ParsedControl) error {
	for _, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("invalid -arg %q: it holds a NUL byte", a)
		}
	}
	r.Args = append(r.Args, c.Args...)
	for _, kv := range c.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.IndexByte(kv, 0) >= 0 {
			return fmt.Errorf("invalid -env %q: want K=V", kv)
		}
		r.Env = setEnv(r.Env, kv)
	}
	if c.Cwd != "" {
		if !filepath.IsAbs(c.Cwd) || strings.IndexByte(c.Cwd, 0) >= 0 {
			return fmt.Errorf("invalid -cwd %q: want an absolute path", c.Cwd)
		}
		r.WorkDir = filepath.Clean(c.Cwd)
	}
	return nil
}

// sessionError names an open line's settings as open's flags do: -size,
// not the run's -tty-size.
func sessionError(err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "invalid -tty-size"); ok {
		return errors.New("invalid -size" + rest)
	}
	return err
}

// setEnv returns env with kv's variable set to kv: the entry of the same
// name replaced, or kv appended.
func setEnv(env []string, kv string) []string {
	k, _, _ := strings.Cut(kv, "=")
	for i, e := range env {
		if ek, _, _ := strings.Cut(e, "="); ek == k {
			env[i] = kv
			return env
		}
	}
	return append(env, kv)
}
