//go:build linux

package bridge

import (
	"context"

	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/bridge/execmode"
	"github.com/fifobridge/fifobridge/bridge/stream"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/status"
)

// engine is stream or exec mode. Run serves until the work is over or ctx
// is done, closes the FIFO ends it was given, and returns after every
// goroutine and child it started is gone. Snapshot is its part of the
// status file.
type engine interface {
	Run(ctx context.Context) (child.ExitStatus, error)
	Snapshot() status.Status
}

// engine returns the engine of the agent's mode, serving src and sink and
// starting every child as spec says.
func (a *agent) engine(spec child.Spec, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink) engine {
	if a.cfg.Mode == "exec" {
		return execmode.New(a.cfg.Exec(spec, a.replies), reaper, src, sink, a.statusFile.Poke)
	}
	return stream.New(a.cfg.Stream(spec, a.dir, a.conversation()), reaper, src, sink, a.statusFile.Poke)
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
