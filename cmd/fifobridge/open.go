//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

const openUsage = "usage: fifobridge open [-dir DIR] [-wait 0] [-timeout 30s] [-reuse] [-tty] [-size COLSxROWS] [-prompt REGEX] [-continuation REGEX] [-arg A]... [-env K=V]... [-cwd DIR] [-user USER] NAME [-- PROGRAM [ARG...]]"

// openFlags are open's flags: what it sets for its session, and how it
// waits.
type openFlags struct {
	fs                   *flag.FlagSet
	dir                  *string
	wait, timeout        time.Duration
	reuse, tty           bool
	size, cwd, user      string
	prompt, continuation string
	args, env            stringList
}

func newOpenFlags() *openFlags {
	fs, dir := hostFlagSet("fifobridge open")
	o := &openFlags{fs: fs, dir: dir}
	fs.DurationVar(&o.wait, "wait", 0, "first wait up to this long for an agent to serve DIR")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "with a prompt, how long the child may take to show its first one (0: the agent's default); open gives up a little later")
	fs.BoolVar(&o.reuse, "reuse", false, "a session NAME open already is a success, and nothing is started")
	fs.BoolVar(&o.tty, "tty", false, "run the child on a pseudo-terminal (default: the run's -tty)")
	fs.StringVar(&o.size, "size", "", "the terminal's size, `COLSxROWS` (default: the run's -tty-size)")
	fs.StringVar(&o.prompt, "prompt", "", "the child's prompt, a `REGEX`; '' turns the run's -prompt off (default: the run's)")
	fs.StringVar(&o.continuation, "continuation", "", "the child's continuation prompt, a `REGEX` (default: the run's)")
	fs.Var(&o.args, "arg", "append `A` to PROGRAM's arguments (repeatable; the agent needs -allow-args)")
	fs.Var(&o.env, "env", "set `K=V` in the child's environment (repeatable; the agent needs -allow-args)")
	fs.StringVar(&o.cwd, "cwd", "", "the child's working directory (the agent needs -allow-args)")
	fs.StringVar(&o.user, "user", "", "run the session as `USER`, a name or UID (one of the agent's -allow-users)")
	return o
}

// options are the fields of the open line: those of the flags given on
// the command line, and no other, so that the run's settings hold for
// the rest (-tty=false given is sent as false).
func (o *openFlags) options() (client.OpenOptions, error) {
	var c client.OpenOptions
	var err error
	o.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "reuse":
			c.Reuse = o.reuse
		case "tty":
			c.Tty = &o.tty
		case "size":
			c.Size = o.size
		case "prompt":
			c.Prompt = &o.prompt
		case "continuation":
			c.Continuation = &o.continuation
		case "arg":
			c.Args = o.args
		case "env":
			for _, kv := range o.env {
				if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
					err = fmt.Errorf("invalid -env %q: want K=V", kv)
				}
			}
			c.Env = o.env
		case "cwd":
			c.Cwd = o.cwd
		case "user":
			c.User = o.user
		case "timeout":
			c.Limit = o.timeout
		}
	})
	return c, err
}

// command is what follows NAME: nothing, or "--" and the session's own
// PROGRAM [ARG...].
func (o *openFlags) command() ([]string, error) {
	rest := o.fs.Args()[1:]
	switch {
	case len(rest) == 0:
		return nil, nil
	case rest[0] != "--":
		return nil, fmt.Errorf("want one NAME, then nothing or -- PROGRAM [ARG...]\n%s", openUsage)
	case len(rest) == 1 || rest[1] == "":
		return nil, fmt.Errorf("want PROGRAM after --\n%s", openUsage)
	}
	return rest[1:], nil
}

// openSession is `fifobridge open [flags] NAME [-- PROGRAM [ARG...]]`:
// it opens session NAME of the sessions-mode agent serving DIR (running
// its own PROGRAM when one follows --) and exits 0 once its child has
// started (with a prompt, once it is ready); 124 when the prompt did not
// come in time (the session stays open), 126/127 when PROGRAM cannot
// start, 125 for a refused open or any bridge error. Of the environment
// it reads only FIFOBRIDGE_DIR.
func openSession(cmdline []string) int {
	o := newOpenFlags()
	if code, ok := parseHostFlags(o.fs, cmdline, openUsage, "dir"); !ok {
		return code
	}
	opts, err := o.options()
	switch {
	case err != nil:
	case o.fs.NArg() < 1:
		err = fmt.Errorf("want one NAME\n%s", openUsage)
	case o.timeout < 0 || o.wait < 0:
		err = errors.New("-timeout and -wait must not be negative")
	default:
		opts.Command, err = o.command()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge open: %v\n", err)
		return exitBridge
	}
	name := o.fs.Arg(0)

	ctx, stopSignals := catchClientSignals()
	defer stopSignals()
	if o.wait > 0 {
		client.WaitServing(ctx, *o.dir, o.wait)
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout+sendGrace)
		defer cancel()
	}
	_, err = client.Sessions{Dir: *o.dir, Warn: warnAs("open")}.Open(ctx, name, opts)
	return openExit(ctx, name, err, o.timeout)
}

// openExit maps how an open ended to open's exit code, with at most one
// line on stderr.
func openExit(ctx context.Context, name string, err error, timeout time.Duration) int {
	var rej *client.RejectedError
	closeHint := fmt.Sprintf("session %s may be open all the same: `fifobridge close %s` ends it", name, name)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &rej) && rej.TimedOut:
		say(ctx, "fifobridge open: %s\n", rej.Msg) // the agent's line says that the session stays open and how to close it
		return exitTimedOut
	case errors.As(err, &rej) && (rej.Code == 126 || rej.Code == 127):
		say(ctx, "fifobridge open: %s\n", rej.Msg)
		return rej.Code
	case errors.As(err, &rej):
		say(ctx, "fifobridge open: %s\n", rej.Msg)
		return exitBridge
	}
	code, _ := clientErrorExit(ctx, "open", err, timeout, closeHint)
	return code
}

// warnAs is how a host command (name) reports what its client ignored.
func warnAs(name string) func(string) {
	return func(msg string) { fmt.Fprintf(os.Stderr, "fifobridge %s: %s\n", name, msg) }
}
