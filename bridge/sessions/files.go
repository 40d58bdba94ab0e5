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

// fifoNames are the FIFOs a session may have.
var fifoNames = []string{inName, outName, askName}

// makeDir makes DIR/sessions/NAME with the mode of DIR/sessions, through
// its descriptor. An entry there that is not a directory of the agent's
// own user (a link, a file, another user's directory) is refused and left
// alone. One of its own, with no session open by that name, is a
// leftover of an earlier agent: it is emptied of a session's files and
// reused.
func (t *Table) makeDir(name string) (*sharedir.Dir, error) {
	var st unix.Stat_t
	if err := unix.Fstat(t.cfg.Sessions.Fd(), &st); err != nil {
		return nil, fmt.Errorf("open session %s: %w", name, err)
	}
	files, err := t.cfg.Sessions.MakeSub(name, sharedir.ModeOf(st.Mode))
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", name, err)
	}
	t.removeEntries(files)
	return files, nil
}

// wire returns the FIFO ends entry s serves: stream mode's are the
// agent's, src and sink; a session's are made in its directory, with
// ask with a prompt and winsize with a terminal, and opened. On failure
// nothing stays open; unwire removes the files.
func (t *Table) wire(s *session) (*fifo.Source, *fifo.Sink, error) {
	if s.streamMode() {
		return t.src, t.sink, nil
	}
	perm := t.cfg.Perm
	made := []struct {
		name string
		mode os.FileMode
	}{{inName, fifo.InputMode(perm)}, {outName, fifo.OutputMode(perm)}}
	if s.prompt {
		made = append(made, struct {
			name string
			mode os.FileMode
		}{askName, fifo.InputMode(perm)})
	}
	for _, m := range made {
		if _, err := fifo.MakeAt(s.files, m.name, m.mode); err != nil {
			return nil, nil, err
		}
	}
	if s.tty {
		if err := t.makeWinsize(s.files); err != nil {
			return nil, nil, err
		}
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
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	return src, sink, nil
}

// makeWinsize makes the empty regular file winsize, which those who may
// write the session's input may write (and read) to resize its terminal.
func (t *Table) makeWinsize(files *sharedir.Dir) error {
	f, err := files.Create(winsizeName, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	mode := 0o600 | t.cfg.Perm&0o066
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w", files.Join(winsizeName), err)
	}
	return nil
}

// unwire removes the files of entry s, a session's: stream mode's are
// the agent's.
func (t *Table) unwire(s *session) {
	if !s.streamMode() {
		t.removeFiles(s.name, s.files)
	}
}

// removeFiles removes a session's files and its directory, and closes
// files. What is not a session's file is left, and so is the directory
// then, with a warning.
func (t *Table) removeFiles(name string, files *sharedir.Dir) {
	t.removeEntries(files)
	files.Close()
	if err := t.cfg.Sessions.RemoveDir(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.log.Warn("cannot remove a session's directory", "session", name, "err", err)
	}
}

// removeEntries removes the session files in files: its FIFOs and its
// regular file winsize, nothing else.
func (t *Table) removeEntries(files *sharedir.Dir) {
	for _, name := range fifoNames {
		if err := fifo.RemoveAt(files, name); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.log.Warn("cannot remove a session's fifo", "err", err)
		}
	}
	st, err := files.Stat(winsizeName)
	if err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		if err := files.Remove(winsizeName); err != nil {
			t.log.Warn("cannot remove a session's winsize", "err", err)
		}
	}
}

// removeLeftovers removes the directories of DIR/sessions that an earlier
// agent left (killed, it could not): those of the agent's own user whose
// name is a session's. Anything else there is left alone.
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
		files, err := t.cfg.Sessions.OpenSub(name)
		if err != nil {
			continue
		}
		t.removeFiles(name, files)
		removed++
	}
	if removed > 0 {
		t.log.Info("removed the session directories an earlier agent left", "removed", removed,
			"dir", strings.TrimSuffix(t.cfg.Sessions.Path(), "/"))
	}
}
