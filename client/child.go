//go:build linux

package client

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// This file is how Signal and Type reach one child of an agent: stream
// mode's, or a session's, and the FIFOs that lead to it.

// ErrNoChild is returned by Signal and Type when the agent serving DIR
// has no child that they could reach as asked: it runs in exec mode (a
// child per request), in sessions mode and no session was named, or in
// stream mode and one was, or (Signal, Type's EOF) in stream mode
// without a control FIFO. Nothing is written then.
var ErrNoChild = errors.New("no such child")

// target is the child that signal or type acts on, and where its
// control lines go: sessions mode's DIR/in, which then names session, or
// stream mode's control FIFO, DIR/control, which names none.
type target struct {
	dir     *sharedir.Dir // DIR, entered once
	session string        // "": stream mode's one child
	control input
	// noControl says why stream mode's agent has no control FIFO to
	// write to, or is nil.
	noControl error
	// in is stream mode's input FIFO as the status file names it (an
	// absolute path: DIR/in, or where the run's -in put it).
	in string
}

// reach finds, for the command what, the child of the agent serving
// dir that session names ("": stream mode's one child). Nothing is
// written unless the status file says a live agent serves dir in the
// mode that has it: ErrNoAgent when none does, ErrNotSessions for a
// session of an agent in another mode, ErrNoChild as that says. A
// session's line goes to DIR/in and is refused by the agent when the
// session is not open.
func reach(dir *sharedir.Dir, session, what string) (target, error) {
	if session != "" {
		if err := checkSessionName(session); err != nil {
			return target{}, err
		}
		agent, err := requireSessions(dir, what+" -session")
		if err != nil {
			return target{}, err
		}
		control := dirInput(dir, inName)
		control.agent = agent
		return target{dir: dir, session: session, control: control}, nil
	}
	s, err := liveStatus(dir, what, "stream")
	if err != nil {
		return target{}, err
	}
	switch s.Mode {
	case "stream":
	case status.ModeSessions:
		return target{}, fmt.Errorf("%w: the agent serving %s runs in sessions mode; %s needs -session NAME", ErrNoChild, dir.Path(), what)
	default:
		return target{}, fmt.Errorf("%w: the agent serving %s runs in %s mode, a child per request; %s needs a stream child or a session",
			ErrNoChild, dir.Path(), s.Mode, what)
	}
	control := dirInput(dir, protocol.StreamControl)
	control.agent = identity(s)
	t := target{dir: dir, control: control, in: s.In}
	if s.Control == "" {
		t.noControl = fmt.Errorf("%w: the agent serving %s serves no control FIFO (%s), which %s needs: "+
			"an agent older than it, or one run with -create=false where none was made",
			ErrNoChild, dir.Path(), dir.Join(protocol.StreamControl), what)
	}
	return t, nil
}

// input enters the child's input FIFO, for the command what: stream
// mode's DIR/in, or the FIFO the status file names as its "in" where
// the run's -in put it elsewhere (its directory entered by path, the
// FIFO, as every input, written only once it is the one the status
// file names by identity), or the session's DIR/sessions/NAME/in
// (entered through descriptors, enterSessionFIFO); the caller releases
// it (release). ErrNoSession when the session is not open.
func (t target) input(what string) (input, error) {
	if t.session == "" {
		if own, _ := filepath.Abs(t.dir.Join(inName)); !filepath.IsAbs(t.in) || t.in == own {
			return dirInput(t.dir, inName), nil
		}
		d, err := enterDir(filepath.Dir(t.in), ErrNoAgent, "")
		if err != nil {
			return input{}, err
		}
		return input{dir: t.dir, fifos: d, name: inName, file: filepath.Base(t.in)}, nil
	}
	return enterSessionFIFO(t.dir, t.session, inName, what+" -session", func(sd *sharedir.Dir, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: session %s is not open in %s (it has no %s)", ErrNoSession, t.session, t.dir.Path(), sd.Join(inName))
		}
		return err
	})
}

// release closes in's directory when it is not DIR.
func (t target) release(in input) {
	if in.fifos != nil && in.fifos != t.dir {
		in.fifos.Close()
	}
}
