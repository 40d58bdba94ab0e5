//go:build linux

package config

import (
	"os"

	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/bridge/execmode"
	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/bridge/stream"
	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// Spec is how every child of r starts, less its stdio; cgroups, if set,
// gives each a cgroup of its own.
func (r *Run) Spec(cgroups *cgroup.Manager) child.Spec {
	spec := child.Spec{
		Program: r.Program, Path: r.ProgramPath, Args: r.Args, Dir: r.WorkDir,
		Credential: r.Credential, Signals: r.Signals, Cgroups: cgroups,
	}
	if r.Credential == nil && len(r.Env) == 0 {
		return spec // the agent's own environment
	}
	env := os.Environ()
	if r.Credential != nil {
		env = child.UserEnv(env, r.Credential.Uid)
	}
	for _, kv := range r.Env {
		env = setEnv(env, kv)
	}
	spec.Env = env
	return spec
}

// Exec is exec mode's configuration: children start as spec says, and
// replies is DIR/replies (nil when there is none).
func (r *Run) Exec(spec child.Spec, replies *sharedir.Dir) *execmode.Config {
	return &execmode.Config{
		Child: spec, Timeout: r.Timeout, MaxConcurrent: r.MaxConcurrent, MaxRequest: r.MaxRequest,
		AllowArgs: r.AllowArgs, StopSignal: r.StopSignal, StopTimeout: r.StopTimeout,
		IdleTimeout: r.IdleTimeout, ReplySweep: r.ReplySweep, Replies: replies,
		Log: r.Log, Forward: r.Forward,
	}
}

// Stream is the configuration of one stream child (stream mode's, or a
// session's): it starts as spec says, dir is where its winsize is (nil
// when missing), and conv its conversation (nil without one; see
// Conversation).
func (r *Run) Stream(spec child.Spec, dir *sharedir.Dir, conv *conversation.Config) *stream.Config {
	return &stream.Config{
		Child: spec, Restart: r.Restart, MaxRestarts: r.MaxRestarts, RestartWindow: r.RestartWindow,
		BackoffMin: r.BackoffMin, BackoffMax: r.BackoffMax, StopSignal: r.StopSignal,
		StopTimeout: r.StopTimeout, IdleTimeout: r.IdleTimeout,
		Tty: r.Tty, TtySize: r.TtySize, Terminal: r.Terminal, Tee: r.Tee, StderrOut: r.StderrOut,
		Conversation: conv, Dir: dir, Log: r.Log, Forward: r.Forward,
	}
}

// Places are where a conversation's FIFOs are: Dir holds its ask FIFO,
// Replies the askers' reply FIFOs (nil when missing: then nobody can
// ask); Created is told of every FIFO made again, to be removed at exit;
// Roles, if set, records what the agent's FIFO ends serve.
type Places struct {
	Dir, Replies *sharedir.Dir
	Created      func(d *sharedir.Dir, name string)
	Roles        *follow.Roles
}

// Conversation is the conversation's part of r's settings at p, or nil
// without a prompt; stream mode adds its own.
func (r *Run) Conversation(p Places) *conversation.Config {
	if r.Prompt == nil {
		return nil
	}
	return &conversation.Config{Prompt: r.Prompt, Continuation: r.Continuation, Settle: r.Settle,
		MaxRequest: r.MaxRequest, ReplySweep: r.ReplySweep, Create: r.Create, AskMode: fifo.InputMode(r.Perm),
		Dir: p.Dir, Replies: p.Replies, Created: p.Created, Roles: p.Roles}
}
