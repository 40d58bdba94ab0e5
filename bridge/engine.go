//go:build linux

package bridge

import (
	"context"

	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/bridge/execmode"
	"github.com/fifobridge/fifobridge/bridge/sessions"
	"github.com/fifobridge/fifobridge/bridge/stream"
	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// engine is stream, exec or sessions mode. Run serves until the work is over or ctx
// is done, closes the FIFO ends it was given, and returns after every
// goroutine and child it started is gone. Snapshot is its part of the
// status file.
type engine interface {
	Run(ctx context.Context) (child.ExitStatus, error)
	Snapshot() status.Status
}

// engine returns the engine of the agent's mode, serving src and sink and
// starting every child in a cgroup of cgroups (nil: none).
func (a *agent) engine(cgroups *cgroup.Manager, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink) engine {
	switch a.cfg.Mode {
	case "exec":
		return execmode.New(a.cfg.Exec(a.cfg.Spec(cgroups), a.replies), reaper, src, sink, a.statusFile.Poke)
	case "sessions":
		return sessions.New(a.sessionsConfig(cgroups), reaper, src, sink, a.statusFile.Poke)
	}
	return stream.New(a.cfg.Stream(a.cfg.Spec(cgroups), a.dir, a.conversation()), reaper, src, sink, a.statusFile.Poke)
}

// sessionsConfig is sessions mode's configuration: a session's stream
// settings are the run's as its open line overrides them
// (config.Run.Session), its child starting in a cgroup of cgroups, and
// its conversation's FIFOs in its own directory, its askers' reply FIFOs
// in DIR/replies.
func (a *agent) sessionsConfig(cgroups *cgroup.Manager) *sessions.Config {
	cfg := a.cfg
	return &sessions.Config{
		MaxSessions: cfg.MaxSessions, SessionIdle: cfg.SessionIdle, StopTimeout: cfg.StopTimeout,
		IdleTimeout: cfg.IdleTimeout, MaxRequest: cfg.MaxRequest, ReplySweep: cfg.ReplySweep,
		Sessions: a.sessions, Replies: a.replies, Perm: cfg.Perm, Log: cfg.Log, Forward: cfg.Forward,
		Flush: func() {
			if err := a.statusFile.Write(); err != nil {
				cfg.Log.Warn("cannot write the status file", "err", err)
			}
		},
		Stream: func(ctl protocol.ParsedControl, files *sharedir.Dir) (*stream.Config, error) {
			run, err := cfg.Session(&ctl)
			if err != nil {
				return nil, err
			}
			conv := run.Conversation(config.Places{Dir: files, Replies: a.replies})
			return run.Stream(run.Spec(cgroups), files, conv), nil
		},
	}
}

// converses says whether the agent holds a conversation: -prompt in
// stream mode. This is the one place that decides.
func (a *agent) converses() bool { return a.cfg.Prompt != nil && a.cfg.Mode == "stream" }

// conversation is the conversation's part of the agent's settings, or nil
// without one; stream mode adds its own.
func (a *agent) conversation() *conversation.Config {
	if !a.converses() {
		return nil
	}
	return a.cfg.Conversation(config.Places{Dir: a.dir, Replies: a.replies, Created: a.addCreated, Roles: a.roles})
}

// warnPromptUnseen warns, once at start, of a conversation that cannot
// see a prompt its child writes to stderr: on pipes with -stderr log the
// child's stderr is the agent's, never read, and python3 -i writes its
// ">>> " there.
func (a *agent) warnPromptUnseen() {
	if a.converses() && !a.cfg.Tty && !a.cfg.StderrOut {
		a.cfg.Log.Warn("-prompt on pipes with -stderr log: a prompt the child writes to its stderr cannot be seen "+
			"(python3 -i writes it there), and its asks would wait for it; give -stderr out", "prompt", a.cfg.Prompt.String())
	}
}
