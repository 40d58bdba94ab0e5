//go:build linux

package sessions

import (
	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// Config is what the table is told: the run's configuration, from which
// its own settings (-mode, -max-sessions, -session-idle, -idle-timeout,
// -stop-timeout, -max-request, -perm) and every entry's stream settings
// (config.Run.Entry, from its open line) come, and the directories the
// agent opened for it.
type Config struct {
	// Run is the agent's finished run configuration; the table never
	// changes it.
	*config.Run
	// Cgroups, if set, gives each child a cgroup of its own.
	Cgroups *cgroup.Manager

	// Sessions is DIR/sessions, made by the agent (sessions mode);
	// Replies is DIR/replies (nil without one).
	Sessions, Replies *sharedir.Dir

	// Stream mode's entry: Dir is DIR (nil when missing), where its
	// winsize and ask FIFO are; Roles is what the agent's FIFO ends serve;
	// Created is told of every FIFO its conversation makes again, for the
	// agent to remove at exit.
	Dir     *sharedir.Dir
	Roles   *follow.Roles
	Created func(d *sharedir.Dir, name string)
	// Control is stream mode's control FIFO, DIR/control
	// (protocol.StreamControl), which the agent follows; nil without
	// one. The table serves its lines, with the same control-line code
	// as sessions mode's DIR/in, and Run closes it.
	Control *fifo.Source

	// Flush, if set, rewrites the status file now, and returns once it
	// is written: an open is answered once the file lists its session, a
	// close once it no longer does, so that `health -session` after
	// either says what the answer said.
	Flush func()
}
