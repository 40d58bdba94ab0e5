//go:build linux

package client

import (
	"fmt"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// input is an input FIFO a line is written into: DIR/in, DIR/ask, or a
// session's DIR/sessions/NAME/ask. dir is DIR, entered once, which holds
// the status file and the lock; fifos is the directory that holds the
// FIFO (DIR itself, or a session's, entered from dir through
// descriptors). Neither is the input's to close.
type input struct {
	dir   *sharedir.Dir
	fifos *sharedir.Dir
	name  string // the FIFO's role in "inputs", and its name in fifos unless file says otherwise
	// file is the FIFO's name in fifos where it is not its role: stream
	// mode's input FIFO moved by the run's -in.
	file string
	// session is the session whose FIFO it is, "" for DIR's own: the
	// status file names it under sessions[session].inputs[name], where
	// DIR's own are under inputs[name].
	session string
	// agent is the serving agent (identity) as the status file named it
	// when the input was chosen, or "" when it was not read then: a
	// trip's watch starts from it, not from a read of its own.
	agent string
}

// dirInput is DIR's own input FIFO name.
func dirInput(dir *sharedir.Dir, name string) input {
	return input{dir: dir, fifos: dir, name: name}
}

// fileName is the FIFO's name in in.fifos.
func (in input) fileName() string {
	if in.file != "" {
		return in.file
	}
	return in.name
}

// path is the FIFO's path, for messages.
func (in input) path() string { return in.fifos.Join(in.fileName()) }

// role says what the FIFO is served as, for messages: "in", or "ask of
// session sh1".
func (in input) role() string {
	if in.session == "" {
		return in.name
	}
	return fmt.Sprintf("%s of session %s", in.name, in.session)
}

// served returns the FIFO the status file s names for in, and whether it
// names one.
func (in input) served(s status.Status) (status.FIFO, bool) {
	if in.session == "" {
		id, ok := s.Inputs[in.name]
		return id, ok
	}
	sess, ok := findSession(s, in.session)
	if !ok {
		return status.FIFO{}, false
	}
	id, ok := sess.Inputs[in.name]
	return id, ok
}

// findSession returns the session name the status file s lists.
func findSession(s status.Status, name string) (status.Session, bool) {
	return s.Session(name)
}
