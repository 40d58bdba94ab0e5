//go:build linux

package bridge

import (
	"context"

	"github.com/fifobridge/fifobridge/bridge/execmode"
	"github.com/fifobridge/fifobridge/bridge/sessions"
	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
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
// starting every child in a cgroup of cgroups (nil: none): exec mode's,
// or the table of stream children (stream and sessions mode).
func (a *agent) engine(cgroups *cgroup.Manager, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink) engine {
	if a.cfg.Mode == "exec" {
		return execmode.New(a.cfg.Exec(a.cfg.Spec(cgroups), a.replies), reaper, src, sink, a.statusFile.Poke)
	}
	return sessions.New(a.tableConfig(cgroups), reaper, src, sink, a.statusFile.Poke)
}

// tableConfig is the configuration of the table of stream children: the
// run's, every child's settings coming from its open line
// (config.Run.Entry, stream mode's being the empty one), its children in
// cgroups of cgroups, its askers' reply FIFOs in DIR/replies; stream
// mode's entry is DIR's own, its FIFOs the agent's (roles, and those
// made again removed at exit).
func (a *agent) tableConfig(cgroups *cgroup.Manager) *sessions.Config {
	return &sessions.Config{Run: a.cfg, Cgroups: cgroups, Sessions: a.sessions, Replies: a.replies,
		Dir: a.dir, Roles: a.roles, Created: a.addCreated, Control: a.controlFIFO(),
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
