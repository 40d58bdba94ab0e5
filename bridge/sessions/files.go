//go:build linux

package sessions

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// The files of a session, in DIR/sessions/NAME.
const (
	inName      = "in"
	outName     = "out"
	askName     = "ask"
	winsizeName = "winsize"
)

// layout is every file a session's directory may hold: an open makes
// some of them (makeFiles), and a close, or the sweep of what an earlier
// agent left, removes all of them, each only while it is of its kind, and
// nothing else.
var layout = sharedir.Layout{
	{Name: inName, Kind: sharedir.FIFO},
	{Name: outName, Kind: sharedir.FIFO},
	{Name: askName, Kind: sharedir.FIFO},
	{Name: winsizeName, Kind: sharedir.File},
}

// makeFiles makes DIR/sessions/NAME whole, in one call (a sharedir.Unit):
// its in and out, ask with a prompt and the regular file winsize with a
// terminal, each with its mode of -perm (winsize as those who may write
// in may write it), in a directory with the mode of DIR/sessions. An
// entry there that is not a directory of the agent's own user (a link, a
// file, another user's directory) is refused and left alone. One of its
// own, with no session open by that name, is a leftover of an earlier
// agent: it is emptied of a session's files and reused.
func (t *Table) makeFiles(name string, tty, prompt bool) (*sharedir.Unit, error) {
	var st unix.Stat_t
	if err := unix.Fstat(t.cfg.Sessions.Fd(), &st); err != nil {
		return nil, fmt.Errorf("open session %s: %w", name, err)
	}
	perm := t.cfg.Perm
	made := []sharedir.Entry{
		{Name: inName, Kind: sharedir.FIFO, Perm: fifo.InputMode(perm)},
		{Name: outName, Kind: sharedir.FIFO, Perm: fifo.OutputMode(perm)},
	}
	if prompt {
		made = append(made, sharedir.Entry{Name: askName, Kind: sharedir.FIFO, Perm: fifo.InputMode(perm)})
	}
	if tty {
		made = append(made, sharedir.Entry{Name: winsizeName, Kind: sharedir.File, Perm: 0o600 | perm&0o066})
	}
	u, err := t.cfg.Sessions.MakeUnit(name, sharedir.ModeOf(st.Mode), layout, made)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", name, err)
	}
	return u, nil
}

// wire returns the FIFO ends entry s serves: stream mode's are the
// agent's, src and sink; a session's are its in and out, opened and
// claimed in its roles (neither ever serves the other's FIFO). On
// failure nothing stays open; unwire removes the files.
func (t *Table) wire(s *session) (*fifo.Source, *fifo.Sink, error) {
	if s.streamMode() {
		return t.src, t.sink, nil
	}
	src, err := fifo.OpenSourceAt(s.files, inName)
	if err != nil {
		return nil, nil, err
	}
	if err := s.roles.Serve(follow.RoleIn, src); err != nil {
		src.Close()
		return nil, nil, err
	}
	sink, err := fifo.OpenSinkAt(s.files, outName)
	if err == nil {
		if err = s.roles.Serve(follow.RoleOut, sink); err != nil {
			sink.Close()
		}
	}
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	return src, sink, nil
}

// follow has a session's in and out, src and sink, follow their entries
// as DIR's own FIFOs do (package follow): a FIFO put in place of one is
// served in its stead, the bytes still in the old one carried over, and
// with -create a missing one is made again, with its mode, after a
// second. It costs nothing while nothing changes: the session's
// directory is watched through the agent's one inotify instance. The
// session's run stops it once its engine returned. Stream mode's ends
// are the agent's to follow.
func (t *Table) follow(s *session, src *fifo.Source, sink *fifo.Sink) {
	if s.streamMode() {
		return
	}
	perm := t.cfg.Perm
	s.follower = follow.Start([]follow.End{
		{Dir: s.files, Name: inName, Path: s.files.Join(inName), FIFO: src, Mode: fifo.InputMode(perm), Input: true, Role: follow.RoleIn},
		{Dir: s.files, Name: outName, Path: s.files.Join(outName), FIFO: sink, Mode: fifo.OutputMode(perm), Role: follow.RoleOut},
	}, follow.Options{Create: t.cfg.Create, Log: s.log, Sink: sink, Roles: s.roles, Changed: t.poke})
}

// unwire removes the files of entry s, a session's: stream mode's are
// the agent's.
func (t *Table) unwire(s *session) {
	if !s.streamMode() {
		t.removeFiles(s)
	}
}

// removeFiles removes session s's files and its directory, in one call
// (sharedir.Unit.Remove). What is not a session's file is left, and so is
// the directory then, with a warning.
func (t *Table) removeFiles(s *session) {
	if err := s.unit.Remove(); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("cannot remove a session's directory", "err", err)
	}
}

// removeLeftovers removes the directories of DIR/sessions that an earlier
// agent left (killed, it could not): those of the agent's own user whose
// name is a session's, each as a close removes a session's
// (sharedir.Dir.RemoveUnit). Anything else there is left alone.
func (t *Table) removeLeftovers() {
	var names []string
	err := t.cfg.Sessions.EachName(func(name string) {
		if protocol.ValidSessionName(name) {
			names = append(names, name)
		}
	})
	if err != nil {
		t.log.Warn("cannot look for sessions an earlier agent left", "err", err)
	}
	removed := 0
	for _, name := range names {
		st, err := t.cfg.Sessions.Stat(name)
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
			continue
		}
		if err := t.cfg.Sessions.RemoveUnit(name, layout); err != nil {
			t.log.Warn("cannot remove a session's directory", "session", name, "err", err)
			continue
		}
		removed++
	}
	if removed > 0 {
		t.log.Info("removed the session directories an earlier agent left", "removed", removed,
			"dir", strings.TrimSuffix(t.cfg.Sessions.Path(), "/"))
	}
}
