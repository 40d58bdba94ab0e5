//go:build linux

package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// ErrNoWatch is returned by Watch when the agent serving DIR has no child
// to watch there: it runs in exec mode, a stream agent was asked for a
// session, or a sessions agent for none. Nothing is written then.
var ErrNoWatch = errors.New("nothing to watch")

// WatchOptions is one watch of a child's output.
type WatchOptions struct {
	Dir string // the agent's directory
	// Session names the session of a sessions-mode agent to watch; ""
	// watches a stream agent's one child, through its control FIFO.
	Session string
	// Raw asks for a terminal's output as written, not cleaned of its
	// escape sequences and of the "\r" of "\r\n".
	Raw bool
	// Stdout receives the output as it comes, as Send's Stdout does: a
	// write still blocked when ctx ends is abandoned.
	Stdout io.Writer
	// Lost, when set, is told of every lost frame (bytes the watch lost
	// because it did not keep up), in order with the output.
	Lost func(bytes int64)
	// Warn, when set, is told about what Watch ignores, as Send's is.
	Warn func(msg string)
}

// Watched is how a watch ended: with the child it followed (Exited, with
// its Code and Signal), or with the session or stream, closed (Closed).
type Watched struct {
	Exited bool
	Code   int
	Signal string
	Closed bool
}

// Watch follows the output of the child that o names from now on, copying
// it to o.Stdout as it comes, until that child ends, the session or
// stream closes, or ctx ends (its error; the agent sees the reply FIFO's
// reader leave and drops the watch). It rides Send's transport: one
// control line, "op":"watch", written to the FIFO the status file names
// (a session's: DIR/in in sessions mode; stream mode's control FIFO),
// answered on a private reply FIFO removed before Watch returns. The
// agent serves a watch only to a user whom the output FIFO's mode lets
// read it: before the line is written, the reply FIFO is given the
// output FIFO's group when the caller is in it, which is how the agent
// learns that it is. A watch refused is a *RejectedError.
func Watch(ctx context.Context, o WatchOptions) (Watched, error) {
	if err := ctx.Err(); err != nil {
		return Watched{}, err
	}
	dir, err := enterDir(o.Dir, ErrNoAgent, "")
	if err != nil {
		return Watched{}, err
	}
	defer dir.Close()
	in, outGID, err := watchInput(dir, o.Session)
	if err != nil {
		return Watched{}, err
	}
	c := protocol.Control{ID: randname.New(), Op: protocol.OpWatch, Session: o.Session, Raw: o.Raw}
	t := trip{in: in, relay: relay{id: c.ID, stdout: o.Stdout, stderr: io.Discard, warn: o.Warn, lost: o.Lost},
		line: func(reply string) ([]byte, error) {
			c.Reply = reply
			return encodeLine(c)
		},
		prepare: func(r *replyFIFO) { r.joinGroup(outGID) },
	}
	res, err := t.run(ctx)
	if err != nil {
		return Watched{}, err
	}
	if a := t.relay.answer; a != nil && a.Type == protocol.FrameClosed {
		return Watched{Closed: true}, nil
	}
	if !res.Exited {
		return Watched{}, errors.New("watch: the agent ended the watch with neither an exit nor a closed frame")
	}
	return Watched{Exited: true, Code: res.Code, Signal: res.Signal}, nil
}

// watchInput is where a watch line goes, as the status file of dir says:
// DIR/in for a session of a sessions agent, DIR/control for a stream
// agent's child; and the group of the output FIFO watched (-1 when it
// cannot be told). Nothing is written to an agent that has no such child.
func watchInput(dir *sharedir.Dir, session string) (input, int, error) {
	if session != "" {
		if err := checkSessionName(session); err != nil {
			return input{}, -1, err
		}
	}
	s, err := status.ReadAt(dir, statusName)
	if errors.Is(err, os.ErrNotExist) {
		return input{}, -1, fmt.Errorf("%w: %s has no status file (watch needs an agent in stream or sessions mode)", ErrNoAgent, dir.Path())
	}
	if err != nil {
		return input{}, -1, fmt.Errorf("%w: %v", ErrNoAgent, err)
	}
	if ok, err := status.AgentAliveAt(dir); err != nil || !ok || s.State == "stopped" {
		return input{}, -1, fmt.Errorf("%w: no agent serves %s (nothing holds %s)", ErrNoAgent, dir.Path(), dir.Join(status.LockName))
	}
	switch {
	case s.Mode == status.ModeSessions && session == "":
		return input{}, -1, fmt.Errorf("%w: the agent serving %s runs in sessions mode: watch needs -session NAME", ErrNoWatch, dir.Path())
	case s.Mode == status.ModeSessions:
		if _, ok := findSession(s, session); !ok {
			return input{}, -1, fmt.Errorf("%w: session %s is not open in %s", ErrNoSession, session, dir.Path())
		}
		return dirInput(dir, inName), sessionOutGroup(dir, session), nil
	case s.Mode == "exec":
		return input{}, -1, fmt.Errorf("%w: the agent serving %s runs in exec mode, whose requests have their own output", ErrNoWatch, dir.Path())
	case session != "":
		return input{}, -1, fmt.Errorf("%w: the agent serving %s runs in %s mode, which has no sessions", ErrNoWatch, dir.Path(), s.Mode)
	case s.Inputs[protocol.StreamControl] == (status.FIFO{}):
		return input{}, -1, fmt.Errorf("%w: the agent serving %s serves no control FIFO (%s)", ErrNoWatch, dir.Path(), dir.Join(protocol.StreamControl))
	}
	return dirInput(dir, protocol.StreamControl), pathGroup(s.Out), nil
}

// sessionOutGroup is the group of session name's output FIFO, entered
// from dir through descriptors; -1 when it cannot be told.
func sessionOutGroup(dir *sharedir.Dir, name string) int {
	sessions, err := dir.EnterSub(sessionsName)
	if err != nil {
		return -1
	}
	defer sessions.Close()
	sd, err := sessions.EnterSub(name)
	if err != nil {
		return -1
	}
	defer sd.Close()
	st, err := sd.Stat("out")
	if err != nil {
		return -1
	}
	return int(st.Gid)
}

// pathGroup is the group of the file at path, not following a link; -1
// when it cannot be told.
func pathGroup(path string) int {
	var st unix.Stat_t
	if path == "" || unix.Lstat(path, &st) != nil {
		return -1
	}
	return int(st.Gid)
}

// joinGroup gives the reply FIFO group gid when the caller is in it (its
// effective group or a supplementary one) and the FIFO has another: the
// kernel lets a user give its file only a group it is in, so the agent,
// which cannot know a host user's groups, reads membership there. Any
// failure leaves the FIFO as it is: the agent then judges by its
// maker's group.
func (p *replyFIFO) joinGroup(gid int) {
	if gid < 0 {
		return
	}
	groups, _ := os.Getgroups()
	if gid != os.Getegid() && !slices.Contains(groups, gid) {
		return
	}
	rc, err := p.r.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil && int(st.Gid) != gid {
			unix.Fchown(int(fd), -1, gid)
		}
	})
}
