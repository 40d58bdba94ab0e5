//go:build linux

package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/status"
)

// servedPatience is how long a request waits for the input FIFO it opened
// to be the one the agent serves under that name: the agent rewrites its
// status file at once when it serves another FIFO (a replaced one,
// followed within a second), and a FIFO it serves keeps its name unless
// someone renamed it.
const servedPatience = time.Second

// servedPoll is how often a request that waits for that looks again.
const servedPoll = 20 * time.Millisecond

// errNotServed says the input FIFO opened is not the one the agent
// serves under its name; errUntold that the agent's status file does not
// tell which one it serves.
var (
	errNotServed = errors.New("not the FIFO the agent serves")
	errUntold    = errors.New("cannot tell which FIFO the agent serves")
)

// idString names a FIFO by inode number and, when known, birth time.
func idString(ino uint64, btime int64) string {
	if btime == 0 {
		return fmt.Sprintf("inode %d", ino)
	}
	return fmt.Sprintf("inode %d made %s", ino, time.Unix(0, btime).UTC().Format(time.RFC3339Nano))
}

// openInput opens the input FIFO in for writing, without waiting for a
// reader, and returns it once the request may be written there: key
// allows it (replyKey.checkInput) and it is the FIFO the agent serves as
// in (checkServed), both looked at on the descriptor returned. While it is not that FIFO, it tries again, with the name
// opened afresh, for servedPatience at most; then, or when key refuses
// it, it fails and nothing was written.
func openInput(ctx context.Context, in input, key replyKey) (*os.File, error) {
	deadline := time.NewTimer(servedPatience)
	defer deadline.Stop()
	tick := time.NewTicker(servedPoll)
	defer tick.Stop()
	for {
		w, err := openWriter(in)
		if err != nil {
			return nil, err
		}
		err = checkWriter(in, w, key)
		if err == nil {
			return w, nil
		}
		w.Close()
		if !errors.Is(err, errNotServed) && !errors.Is(err, errUntold) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, err
		case <-tick.C:
		}
	}
}

// openWriter opens the input FIFO in for writing without waiting: no
// reader, or no FIFO, is ErrNoAgent.
func openWriter(in input) (*os.File, error) {
	w, err := fifo.OpenWriterNowAt(in.fifos, in.fileName())
	switch {
	case errors.Is(err, fifo.ErrNoReader):
		return nil, fmt.Errorf("%w %s", ErrNoAgent, in.path())
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%w %s (it does not exist)", ErrNoAgent, in.path())
	}
	return w, err
}

// checkWriter checks w, the input FIFO in opened for writing, on its
// descriptor: key.checkInput, then checkServed.
func checkWriter(in input, w *os.File, key replyKey) error {
	i, err := fifo.Describe(w)
	if err != nil {
		return fmt.Errorf("stat %s: %w", in.path(), err)
	}
	if err := key.checkInput(i, in.path()); err != nil {
		return err
	}
	return checkServed(in, i, key)
}

// checkServed fails (errNotServed, errUntold) unless the input FIFO i
// describes, opened as in, is the one the agent serves as in: the status
// file, written by the agent's user alone (status.ReadOwnedAt), names it
// (status.Status.Inputs, or a session's Inputs; fifo.ID.Same). Where
// nobody but the agent's user, root and the sender may rename DIR's
// entries (key.othersRename is false), the name is the agent's, and a
// status file that names nothing for DIR's own FIFO (an agent older than
// the check, one whose -status is elsewhere) does: only a FIFO it names
// otherwise is refused. A session's FIFO must always be named: every
// agent that serves sessions names them, and a session it does not list
// is not open.
func checkServed(in input, i fifo.Info, key replyKey) error {
	read := status.ReadOwnedHeadAt // DIR's own inputs: the sessions are not read
	if in.session != "" {
		read = status.ReadOwnedAt
	}
	s, err := read(in.dir, statusName, key.agent)
	id, named := in.served(s)
	switch {
	case err == nil && named && i.Same(fifo.ID{Ino: id.Ino, Btime: id.Btime}):
		return nil
	case err == nil && named:
		return fmt.Errorf("%s (%s) is %w as %s (%s, says %s): someone may have renamed the entries of %s; refusing, nothing written "+
			"(the sticky bit, chmod +t %s, keeps others from renaming the agent's entries)",
			in.path(), idString(i.Ino, i.Btime), errNotServed, in.role(), idString(id.Ino, id.Btime), in.dir.Join(statusName), in.fifos.Path(), in.fifos.Path())
	case !key.othersRename && in.session == "":
		return nil
	case err == nil && in.session != "" && !listed(s, in.session):
		err = fmt.Errorf("%s lists no session %s: it is not open", in.dir.Join(statusName), in.session)
	case err == nil:
		err = fmt.Errorf("%s names no FIFO served as %s", in.dir.Join(statusName), in.role())
	}
	how := fmt.Sprintf("and others may rename the entries of %s", in.fifos.Path())
	if in.session != "" {
		how = "and a session's FIFO must be named"
	}
	return fmt.Errorf("%s: %w as %s (%v), %s; refusing, nothing written",
		in.path(), errUntold, in.role(), err, how)
}

// listed says whether the status file s lists session name.
func listed(s status.Status, name string) bool {
	_, ok := findSession(s, name)
	return ok
}
