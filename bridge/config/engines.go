//go:build linux

package config

import (
	"os"

	"github.com/fifobridge/fifobridge/bridge/execmode"
	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/child"
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
	switch {
	case r.OwnUser:
		env = child.SessionEnv(env, r.Credential.Uid)
	case r.Credential != nil:
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
