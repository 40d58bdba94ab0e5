//go:build linux

package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
	"golang.org/x/sys/unix"
)

// repliesMode is the mode of DIR/replies: anyone may make a reply FIFO
// there (and, with the sticky bit, remove only their own), only root can
// list it, so a reply FIFO's name stays its client's secret.
const repliesMode = 0o733 | os.ModeSticky

// prepare opens the directories, takes the lock on DIR, and makes the FIFOs
// (Create) or waits for them. Every directory named by a flag is resolved
// once, here (see sharedir.Open); from then on everything in it goes through
// its descriptor.
func (a *agent) prepare(ctx context.Context) error {
	if a.cfg.Create {
		return a.prepareCreate()
	}
	return a.prepareWait(ctx)
}

func (a *agent) prepareCreate() error {
	cfg := a.cfg
	var err error
	if a.dir, err = a.makeDir(); err != nil {
		return err
	}
	if err := a.takeLock(); err != nil {
		return err
	}
	if err := a.attachStatus(true); err != nil {
		return err
	}
	if cfg.Mode == "exec" {
		if a.replies, err = a.dir.MakeSub("replies", repliesMode); err != nil {
			return err
		}
	}
	if err := a.prepareSessions(); err != nil {
		return err
	}
	if err := a.prepareStream(); err != nil {
		return err
	}
	if a.inDir, err = a.openDir(filepath.Dir(cfg.In), true); err != nil {
		return err
	}
	if a.outDir, err = a.openDir(filepath.Dir(cfg.Out), true); err != nil {
		return err
	}
	if err := a.makeFIFO(a.inDir, filepath.Base(cfg.In), fifo.InputMode(cfg.Perm)); err != nil {
		return err
	}
	return a.makeFIFO(a.outDir, filepath.Base(cfg.Out), fifo.OutputMode(cfg.Perm))
}

// makeFIFO makes the FIFO name in d with mode unless it is there, and
// then removes it at exit.
func (a *agent) makeFIFO(d *sharedir.Dir, name string, mode os.FileMode) error {
	made, err := fifo.MakeAt(d, name, mode)
	if err != nil {
		return err
	}
	if made {
		a.addCreated(d, name)
	}
	return nil
}

// prepareWait waits until both FIFOs exist (-create=false). The lock is
// taken as soon as DIR exists, and the status file written as soon as its
// directory does.
func (a *agent) prepareWait(ctx context.Context) error {
	cfg := a.cfg
	for _, p := range []string{cfg.In, cfg.Out} {
		if err := fifo.Check(p); errors.Is(err, fifo.ErrNotFIFO) || errors.Is(err, sharedir.ErrSymlink) {
			return err
		}
	}
	if d, err := a.openDir(cfg.Dir, false); err == nil {
		a.dir = d
		if err := a.takeLock(); err != nil {
			return err
		}
	}
	a.attachStatus(false)
	for _, p := range []string{cfg.In, cfg.Out} {
		cfg.Log.Info("waiting for fifo", "path", p)
		if err := fifo.Wait(ctx, p); err != nil {
			return err
		}
	}
	var err error
	if a.inDir, err = a.openDir(filepath.Dir(cfg.In), false); err != nil {
		return err
	}
	if a.outDir, err = a.openDir(filepath.Dir(cfg.Out), false); err != nil {
		return err
	}
	for _, e := range []entry{{a.inDir, filepath.Base(cfg.In)}, {a.outDir, filepath.Base(cfg.Out)}} {
		if err := fifo.CheckAt(e.dir, e.name); err != nil {
			return err
		}
	}
	return a.prepareWaitDir()
}

// prepareWaitDir finishes prepareWait in DIR: the lock, the status file
// and, in exec mode, replies/.
func (a *agent) prepareWaitDir() error {
	if a.dir == nil {
		d, err := a.openDir(a.cfg.Dir, false)
		if err != nil {
			a.cfg.Log.Warn("no lock taken: the directory cannot be opened", "dir", a.cfg.Dir, "err", err)
			return a.attachStatus(false)
		}
		a.dir = d
		if err := a.takeLock(); err != nil {
			return err
		}
	}
	if err := a.attachStatus(false); err != nil {
		return err
	}
	if a.cfg.Mode == "sessions" {
		return a.prepareSessions()
	}
	if a.cfg.Mode != "exec" {
		return a.prepareStream()
	}
	// replies/ is not a FIFO: the agent makes it even without -create, so
	// that it is never a directory somebody else made and can list.
	r, err := a.dir.MakeSub("replies", repliesMode)
	if err != nil {
		return err
	}
	a.replies = r
	return nil
}

// makeDir opens DIR, making it when it is missing. Made for children
// running as another user (-user, -allow-users), it is 0750: the agent's
// own user and group (the host side's) may enter it, the children's
// users may not, unless one is in the agent's group, which the start-up
// warning then names. Otherwise it is made 0755 less the umask.
func (a *agent) makeDir() (*sharedir.Dir, error) {
	other := func(c *syscall.Credential) bool { return int(c.Uid) != os.Geteuid() }
	if !slices.ContainsFunc(a.cfg.ChildUsers(), other) {
		return a.openDir(a.cfg.Dir, true)
	}
	abs, err := filepath.Abs(a.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("make directory %s: %w", a.cfg.Dir, err)
	}
	d, made, err := sharedir.Make(abs, childDirMode)
	if err != nil {
		return nil, fmt.Errorf("make directory: %w", err)
	}
	if made {
		a.cfg.Log.Debug("made the directory closed to the child's user", "dir", abs, "mode", fmt.Sprintf("%04o", childDirMode))
	}
	a.dirs[abs] = d
	return d, nil
}

// childDirMode is the mode of a DIR the agent makes for a child of another
// user (-user).
const childDirMode = 0o750

// openDir opens the directory at path once per agent (see sharedir.Open).
func (a *agent) openDir(path string, create bool) (*sharedir.Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open directory %s: %w", path, err)
	}
	if d := a.dirs[abs]; d != nil {
		return d, nil
	}
	d, err := sharedir.Open(abs, create)
	if err != nil {
		if create {
			return nil, fmt.Errorf("make directory: %w", err)
		}
		return nil, err
	}
	a.dirs[abs] = d
	return d, nil
}

// takeLock takes the lock on DIR/lock for the agent's life.
func (a *agent) takeLock() error {
	f, err := status.Lock(a.dir, status.FileMode(a.cfg.Perm))
	if errors.Is(err, status.ErrLocked) {
		return fmt.Errorf("another agent is serving %s (%s is locked)", a.dir.Path(), a.dir.Join(status.LockName))
	}
	if err != nil {
		return err
	}
	a.lock = f
	return nil
}

// attachStatus gives the status writer its directory, once; without
// create, a missing directory is not an error, the file is then not
// written.
func (a *agent) attachStatus(create bool) error {
	if a.statusAttached {
		return nil
	}
	d, err := a.openDir(filepath.Dir(a.cfg.StatusPath), create)
	if err != nil {
		if create {
			return err
		}
		return nil
	}
	a.statusFile.Attach(d, filepath.Base(a.cfg.StatusPath))
	a.statusAttached = true
	return nil
}

// closeDirs closes every directory prepare opened and releases the lock.
func (a *agent) closeDirs() {
	if a.replies != nil {
		a.replies.Close()
	}
	if a.sessions != nil {
		a.sessions.Close()
	}
	for _, d := range a.dirs {
		d.Close()
	}
	if a.lock != nil {
		a.lock.Close()
	}
}

// prepareStream makes, in stream mode, DIR/replies, where control lines
// and asks are answered, the control FIFO DIR/control (with -create) and,
// with -prompt, DIR/ask: input FIFOs (fifo.InputMode of -perm), made
// through DIR's descriptor and removed at exit when the agent made them.
// Without -create, DIR/control is not made: it is served if it is there,
// and from when it appears (see openControl), never required; and
// without -prompt a DIR/replies that cannot be made (a DIR the agent may
// not write) leaves the agent without a control FIFO, which it logs,
// rather than failing a stream that worked without one.
func (a *agent) prepareStream() error {
	if a.cfg.Mode != "stream" {
		return nil
	}
	var err error
	if a.replies, err = a.dir.MakeSub("replies", repliesMode); err != nil {
		if a.cfg.Create || a.converses() {
			return err
		}
		a.cfg.Log.Warn("no control fifo: nowhere to answer its lines; signal and type -eof cannot reach the child", "err", err)
		return nil
	}
	if a.cfg.Create {
		if err := a.makeFIFO(a.dir, protocol.StreamControl, fifo.InputMode(a.cfg.Perm)); err != nil {
			return err
		}
	}
	if !a.converses() {
		return nil
	}
	return a.makeFIFO(a.dir, conversation.AskName, fifo.InputMode(a.cfg.Perm))
}

// sessionsName is the directory of the sessions' files, in DIR.
const sessionsName = "sessions"

// prepareSessions makes, in sessions mode, DIR/replies and DIR/sessions,
// which holds a directory of FIFOs per session. DIR/sessions is the
// agent's, as DIR/replies is: one of another user there is refused (the
// agent does not start), and one of its own gets its mode, DIR's less
// the right of others to make entries, so that only the agent makes a
// session's directory. Without DIR (-create=false) there is no session
// to serve: that is the agent's failure.
func (a *agent) prepareSessions() error {
	if a.cfg.Mode != "sessions" {
		return nil
	}
	if a.dir == nil {
		return fmt.Errorf("sessions mode needs the directory %s, which cannot be opened", a.cfg.Dir)
	}
	var err error
	if a.replies, err = a.dir.MakeSub("replies", repliesMode); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(a.dir.Fd(), &st); err != nil {
		return fmt.Errorf("stat %s: %w", a.dir.Path(), err)
	}
	a.sessions, err = a.dir.MakeSub(sessionsName, sharedir.ModeOf(st.Mode&^0o022|0o700))
	return err
}
