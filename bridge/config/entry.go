//go:build linux

package config

import (
	"log/slog"
	"time"

	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/bridge/stream"
	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// SessionFirstRun is how long a session's first run may take to fail as
// a program that cannot start does (127 or 126 at once: `env PROG` with
// no PROG): such an open fails, and no session is left. An open without
// a prompt is answered once the child is seen waiting for its input, or
// has run this long (stream.Config.FirstRun).
const SessionFirstRun = time.Second

// Places are where one stream child of the agent is, stream mode's or a
// session's: Dir holds its files (its ask FIFO, winsize), Replies the
// askers' reply FIFOs (nil when missing: then nobody can ask); Created,
// if set, is told of every FIFO made again, to be removed at exit;
// Roles, if set, records what its FIFO ends serve; Cgroups, if set,
// gives each of its children a cgroup of its own; Log is its log.
type Places struct {
	Dir, Replies *sharedir.Dir
	Created      func(d *sharedir.Dir, name string)
	Roles        *follow.Roles
	Cgroups      *cgroup.Manager
	Log          *slog.Logger
}

// Entry is the configuration of one stream child of the agent, from its
// open line: this is the one place a stream child's settings are put
// together. Stream mode's child is the empty line's (open.Session ""):
// the run's settings, stopping the agent after -idle-timeout, with the
// agent's controlling terminal. A session's is the run's as its line
// overrides them (Session), closed after -session-idle, with no
// controlling terminal, and its first run judged (SessionFirstRun). r is never
// changed. The error is the one line of a refused
// open (125).
func (r *Run) Entry(open *protocol.ParsedControl, at Places) (*stream.Config, error) {
	run, err := r.Session(open)
	if err != nil {
		return nil, err
	}
	return r.EntryOf(run, open.Session, at), nil
}

// EntryOf is Entry in two steps, for a caller that needs an entry's
// settings (its terminal, its prompt) before its places (the files it
// makes by them): run is r.Session of the line that opens session (""
// for stream mode's).
func (r *Run) EntryOf(run *Run, session string, at Places) *stream.Config {
	if at.Log == nil {
		at.Log = r.Log
	}
	cfg := run.stream(at)
	if session != "" {
		cfg.IdleTimeout, cfg.Terminal, cfg.FirstRun = r.SessionIdle, nil, SessionFirstRun
	}
	return cfg
}

// stream is the configuration of a stream child of r at at.
func (r *Run) stream(at Places) *stream.Config {
	return &stream.Config{
		Child: r.Spec(at.Cgroups), Restart: r.Restart, MaxRestarts: r.MaxRestarts, RestartWindow: r.RestartWindow,
		BackoffMin: r.BackoffMin, BackoffMax: r.BackoffMax, StopSignal: r.StopSignal,
		StopTimeout: r.StopTimeout, IdleTimeout: r.IdleTimeout,
		Tty: r.Tty, TtySize: r.TtySize, Terminal: r.Terminal, Tee: r.Tee, StderrOut: r.StderrOut,
		Conversation: r.conversation(at), Dir: at.Dir, Log: at.Log,
	}
}

// conversation is the conversation's part of r's settings at at, or nil
// without a prompt; stream mode adds its own.
func (r *Run) conversation(at Places) *conversation.Config {
	if r.Prompt == nil {
		return nil
	}
	return &conversation.Config{Prompt: r.Prompt, Continuation: r.Continuation, Settle: r.Settle,
		MaxRequest: r.MaxRequest, Create: r.Create, AskMode: fifo.InputMode(r.Perm),
		Dir: at.Dir, Replies: at.Replies, Created: at.Created, Roles: at.Roles}
}
