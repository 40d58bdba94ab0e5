//go:build linux

package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
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

// openInput opens the input FIFO name of dir for writing, without
// waiting for a reader, and returns it once the request may be written
// there: key allows it (replyKey.checkInput) and it is the FIFO the agent
// serves as name (checkServed), both looked at on the descriptor
// returned. While it is not that FIFO, it tries again, with the name
// opened afresh, for servedPatience at most; then, or when key refuses
// it, it fails and nothing was written.
func openInput(ctx context.Context, dir *sharedir.Dir, name string, key replyKey) (*os.File, error) {
	deadline := time.NewTimer(servedPatience)
	defer deadline.Stop()
	tick := time.NewTicker(servedPoll)
	defer tick.Stop()
	for {
		w, err := openWriter(dir, name)
		if err != nil {
			return nil, err
		}
		err = checkWriter(dir, name, w, key)
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

// openWriter opens the input FIFO name of dir for writing without
// waiting: no reader, or no FIFO, is ErrNoAgent.
func openWriter(dir *sharedir.Dir, name string) (*os.File, error) {
	w, err := fifo.OpenWriterNowAt(dir, name)
	switch {
	case errors.Is(err, fifo.ErrNoReader):
		return nil, fmt.Errorf("%w %s", ErrNoAgent, dir.Join(name))
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%w %s (it does not exist)", ErrNoAgent, dir.Join(name))
	}
	return w, err
}

// checkWriter checks w, the input FIFO name of dir opened for writing,
// on its descriptor: key.checkInput, then checkServed.
func checkWriter(dir *sharedir.Dir, name string, w *os.File, key replyKey) error {
	i, err := fifo.Describe(w)
	if err != nil {
		return fmt.Errorf("stat %s: %w", dir.Join(name), err)
	}
	if err := key.checkInput(i, dir.Join(name)); err != nil {
		return err
	}
	return checkServed(dir, name, i, key)
}

// checkServed fails (errNotServed, errUntold) unless the input FIFO i
// describes, opened as name in dir, is the one the agent serves as name:
// the status file, written by the agent's user alone
// (status.ReadOwnedAt), names it (status.Status.Inputs; fifo.ID.Same). Where nobody but the agent's user, root and the
// sender may rename DIR's entries (key.othersRename is false), the name
// is the agent's, and a status file that names nothing (an agent older
// than the check, one whose -status is elsewhere) does: only a FIFO it
// names otherwise is refused.
func checkServed(dir *sharedir.Dir, name string, i fifo.Info, key replyKey) error {
	s, err := status.ReadOwnedAt(dir, statusName, key.agent)
	id, named := s.Inputs[name]
	switch {
	case err == nil && named && i.Same(fifo.ID{Ino: id.Ino, Btime: id.Btime}):
		return nil
	case err == nil && named:
		return fmt.Errorf("%s (%s) is %w as %s (%s, says %s): someone may have renamed the entries of %s; refusing, nothing written "+
			"(the sticky bit, chmod +t %s, keeps others from renaming the agent's entries)",
			dir.Join(name), idString(i.Ino, i.Btime), errNotServed, name, idString(id.Ino, id.Btime), dir.Join(statusName), dir.Path(), dir.Path())
	case !key.othersRename:
		return nil
	case err == nil:
		err = fmt.Errorf("%s names no FIFO served as %s", dir.Join(statusName), name)
	}
	return fmt.Errorf("%s: %w as %s (%v), and others may rename the entries of %s; refusing, nothing written",
		dir.Join(name), errUntold, name, err, dir.Path())
}
