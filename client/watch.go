//go:build linux

package client

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

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
// learns that it is. A watch refused is a *RejectedError; ErrNoChild,
// ErrNoSession, ErrNotSessions and ErrNoAgent are as Signal's, and
// nothing is written then.
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

// watchInput is where a watch line goes (reach: DIR/in naming a session,
// or stream mode's control FIFO), and the group of the output FIFO
// watched, -1 when it cannot be told: a session's out, entered through
// descriptors, or the out the status file names. Nothing is written to
// an agent that has no such child, nor for a session that is not open.
func watchInput(dir *sharedir.Dir, session string) (input, int, error) {
	t, err := reach(dir, session, "watch")
	if err == nil {
		err = t.noControl
	}
	if err != nil {
		return input{}, -1, err
	}
	if session == "" {
		s, err := status.ReadAt(dir, statusName)
		if err != nil {
			return t.control, -1, nil
		}
		return t.control, pathGroup(s.Out), nil
	}
	out, err := enterSessionFIFO(dir, session, "out", "watch -session", func(_ *sharedir.Dir, err error) error { return err })
	if err != nil {
		return input{}, -1, err
	}
	defer out.fifos.Close()
	gid := -1
	if st, err := out.fifos.Stat(out.name); err == nil {
		gid = int(st.Gid)
	}
	return t.control, gid, nil
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
