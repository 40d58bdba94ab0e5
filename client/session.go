//go:build linux

package client

import (
	"errors"
	"fmt"
	"os"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// ErrNotSessions is returned by Open, Close, List and an Ask of a session
// when the agent serving DIR does not run in sessions mode: nothing is
// written then. Its text ends the sentence that names the mode.
var ErrNotSessions = errors.New("needs an agent run with -mode sessions")

// ErrNoSession is returned when the session named is not open (or its
// name could name none), and by an Ask of a session closed while the ask
// waited to be read.
var ErrNoSession = errors.New("no such session")

// sessionsName is the directory of the sessions' own directories in DIR.
const sessionsName = "sessions"

// requireSessions fails unless a live agent serves dir in sessions mode,
// as its status file says: ErrNoAgent when none does (no status file, or
// nobody holds the lock), ErrNotSessions when it runs in another mode.
// what names the command, for the message. An agent writes its status
// file before it serves its FIFOs, so the file read is the serving
// agent's own. A line for sessions is never written on a guess: in exec
// mode DIR/in would take it as a request, in stream mode as the child's
// input.
func requireSessions(dir *sharedir.Dir, what string) error {
	s, err := liveStatus(dir, what, "sessions")
	if err != nil {
		return err
	}
	if s.Mode != status.ModeSessions {
		return fmt.Errorf("the agent serving %s is in %s mode: %s %w", dir.Path(), s.Mode, what, ErrNotSessions)
	}
	return nil
}

// liveStatus returns the status file of the live agent serving dir:
// ErrNoAgent when none does (no status file, or nobody holds the lock).
// what names the command and mode the mode it needs, for the message.
func liveStatus(dir *sharedir.Dir, what, mode string) (status.Status, error) {
	s, err := status.ReadAt(dir, statusName)
	if errors.Is(err, os.ErrNotExist) {
		return s, fmt.Errorf("%w: %s has no status file (%s needs an agent run with -mode %s, whose -status is DIR/status.json)",
			ErrNoAgent, dir.Path(), what, mode)
	}
	if err != nil {
		return s, fmt.Errorf("%w: %v", ErrNoAgent, err)
	}
	if ok, err := status.AgentAliveAt(dir); err != nil || !ok || s.State == "stopped" {
		return s, fmt.Errorf("%w: no agent serves %s (nothing holds %s)", ErrNoAgent, dir.Path(), dir.Join(status.LockName))
	}
	return s, nil
}

// checkSessionName fails unless name may name a session: a name that
// could reach outside DIR/sessions is refused before anything is
// written.
func checkSessionName(name string) error {
	if protocol.ValidSessionName(name) {
		return nil
	}
	return fmt.Errorf("invalid session name %q: want 1 to %d of [A-Za-z0-9._-], not beginning with \".\"",
		truncate(name, protocol.MaxSessionName), protocol.MaxSessionName)
}

// enterSession returns the input of session name's DIR/sessions/NAME/ask,
// entered from dir through descriptors (enterSessionFIFO). The caller
// closes in.fifos. ErrNoSession when NAME is not open, ErrNoConversation
// when it has no prompt (no ask FIFO).
func enterSession(dir *sharedir.Dir, name string) (input, error) {
	return enterSessionFIFO(dir, name, askName, "ask -session", func(sd *sharedir.Dir, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: session %s has no prompt: %s does not exist (open it with -prompt, or run the agent with -prompt)",
				ErrNoConversation, name, sd.Join(askName))
		}
		return fmt.Errorf("%w: %v", ErrNoConversation, err)
	})
}

// enterSessionFIFO returns the input of session name's FIFO
// DIR/sessions/NAME/fifoName, entered from dir through descriptors
// (sharedir.EnterSub: a symbolic link at DIR/sessions or
// DIR/sessions/NAME is refused, not followed), for the command what. The
// caller closes in.fifos. ErrNoSession when NAME is not open; when
// fifoName is not a FIFO there (fifo.CheckAt's error), what bad says of
// it.
func enterSessionFIFO(dir *sharedir.Dir, name, fifoName, what string, bad func(sd *sharedir.Dir, err error) error) (input, error) {
	if err := checkSessionName(name); err != nil {
		return input{}, err
	}
	if err := requireSessions(dir, what); err != nil {
		return input{}, err
	}
	notOpen := func() error {
		return fmt.Errorf("%w: session %s is not open in %s", ErrNoSession, name, dir.Path())
	}
	sessions, err := dir.EnterSub(sessionsName)
	if errors.Is(err, os.ErrNotExist) {
		return input{}, notOpen()
	}
	if err != nil {
		return input{}, err
	}
	defer sessions.Close()
	sd, err := sessions.EnterSub(name)
	if errors.Is(err, os.ErrNotExist) {
		return input{}, notOpen()
	}
	if err != nil {
		return input{}, err
	}
	if err := fifo.CheckAt(sd, fifoName); err != nil {
		err = bad(sd, err)
		sd.Close()
		return input{}, err
	}
	return input{dir: dir, fifos: sd, name: fifoName, session: name}, nil
}
