//go:build linux

package bridge

import (
	"context"

	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/bridge/execmode"
	"github.com/fifobridge/fifobridge/bridge/sessions"
	"github.com/fifobridge/fifobridge/bridge/stream"
	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
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
func (a *agent) engine(cgroups *cgroup.Manager, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink) (engine, error) {
	switch a.cfg.Mode {
	case "exec":
		return execmode.New(a.cfg.Exec(a.cfg.Spec(cgroups), a.replies), reaper, src, sink, a.statusFile.Poke), nil
	case "sessions":
		return sessions.New(a.sessionsConfig(cgroups), reaper, src, sink, a.statusFile.Poke), nil
	}
	// Stream mode's child is the empty open line's, on DIR's own FIFOs.
	cfg, err := a.cfg.Entry(&protocol.ParsedControl{}, config.Places{Dir: a.dir, Replies: a.replies,
		Created: a.addCreated, Roles: a.roles, Cgroups: cgroups})
	if err != nil {
		return nil, err
	}
	return stream.New(cfg, reaper, src, sink, a.statusFile.Poke), nil
}

// sessionsConfig is sessions mode's configuration: the run's, every
// session's stream settings coming from its open line (config.Run.Entry)
// with its children in cgroups of cgroups and its askers' reply FIFOs in
// DIR/replies.
func (a *agent) sessionsConfig(cgroups *cgroup.Manager) *sessions.Config {
	return &sessions.Config{Run: a.cfg, Cgroups: cgroups, Sessions: a.sessions, Replies: a.replies,
		Flush: func() {
			if err := a.statusFile.Write(); err != nil {
				a.cfg.Log.Warn("cannot write the status file", "err", err)
			}
		},
	}
}

// converses says whether the agent holds a conversation: -prompt in
// stream mode. This is the one place that decides.
func (a *agent) converses() bool { return a.cfg.Prompt != nil && a.cfg.Mode == "stream" }

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
