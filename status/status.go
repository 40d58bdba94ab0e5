//go:build linux

package status

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/sharedir"
	"golang.org/x/sys/unix"
)

// Status is the content of the status file. Its JSON form is part of the
// external contract.
type Status struct {
	PID       int       `json:"pid"`
	Mode      string    `json:"mode"`
	State     string    `json:"state"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	In        string    `json:"in"`
	Out       string    `json:"out"`
	// Inputs names the input FIFOs the agent serves now, by what they
	// are: "in" (-in), with -prompt "ask", and in stream mode "control".
	// Send, ask, type and signal check that the FIFO they opened to
	// write a request into is that very FIFO, so that nobody who renamed DIR's entries (swapped DIR/in and DIR/ask)
	// can have a request read as something else. The agent rewrites the
	// file as soon as it serves another FIFO, and never serves a FIFO of
	// its own user as anything but what it first served it as.
	Inputs map[string]FIFO `json:"inputs,omitempty"`
	// Control is the path of stream mode's control FIFO, DIR/control,
	// which takes the control lines that act on the one child (signal,
	// watch, eof); absent in the other modes, and while the agent serves
	// none (without DIR).
	Control string `json:"control,omitempty"`
	// Containment is "cgroup" when every child runs in a cgroup of its
	// own, "tree" when stops rely on the process tree alone.
	Containment string `json:"containment,omitempty"`
	FDs         int    `json:"fds"`
	// Goroutines is the agent's goroutine count, for leak checks; not part
	// of the contract.
	Goroutines int         `json:"goroutines"`
	Child      ChildStatus `json:"child"`
	Requests   Requests    `json:"requests"`
	// Tee counts the -tee copy's bytes (stream mode with -tee only).
	Tee *Tee `json:"tee,omitempty"`
	// Transcript counts the output FIFO's bytes with -prompt.
	Transcript *Transcript `json:"transcript,omitempty"`
	// Sessions lists the open sessions in sessions mode, by name, where
	// the other modes have Child; the file then has no "child".
	Sessions []Session `json:"sessions,omitempty"`
}

// ModeSessions is the mode of an agent that serves sessions.
const ModeSessions = "sessions"

// MarshalJSON writes the status file's JSON: in sessions mode without
// "child" and with "sessions" always present (empty when none is open).
func (s Status) MarshalJSON() ([]byte, error) {
	type plain Status
	if s.Mode != ModeSessions {
		return json.Marshal(plain(s))
	}
	sessions := s.Sessions
	if sessions == nil {
		sessions = []Session{}
	}
	// The outer fields, less deep, hide the embedded ones of the same
	// name.
	return json.Marshal(struct {
		plain
		Child    *struct{} `json:"child,omitempty"`
		Sessions []Session `json:"sessions"`
	}{plain: plain(s), Sessions: sessions})
}

// Session is one open session of sessions mode: its child as ChildStatus
// tells a stream child, and what the session is.
type Session struct {
	Name      string    `json:"name"`
	PID       int       `json:"pid"`
	State     string    `json:"state"`
	StartedAt time.Time `json:"started_at"`
	Restarts  int       `json:"restarts"`
	Tty       bool      `json:"tty"`
	// Child is the session's child as the other modes' "child" tells
	// it: starts, last exit, crash loop, terminal size.
	Child ChildStatus `json:"child"`
	// Turn is the session's conversation; absent without a prompt.
	Turn *Turn `json:"turn,omitempty"`
	// Transcript counts the session's output FIFO with a prompt.
	Transcript *Transcript `json:"transcript,omitempty"`
	// Inputs names the session's input FIFOs as the top level's Inputs
	// names DIR's.
	Inputs map[string]FIFO `json:"inputs,omitempty"`
}

// FIFO identifies a FIFO (see fifo.ID): the device and inode numbers of
// its file system, and its birth time in nanoseconds since the epoch
// where the file system keeps one. A client compares the inode number
// and, where both know one, the birth time, which tells a FIFO from a
// later one given the same inode number; the device number, which
// another mount of the file system may show otherwise, is for people.
type FIFO struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Btime int64  `json:"btime,omitempty"`
}

// Tee counts the bytes of the child's output that -tee copied to the
// agent's stdout, and those it dropped because stdout could not take them.
type Tee struct {
	Written uint64 `json:"written"`
	Dropped uint64 `json:"dropped"`
}

// ChildStatus describes the supervised child (stream mode).
type ChildStatus struct {
	PID      int `json:"pid"`
	Starts   int `json:"starts"`
	Restarts int `json:"restarts"`
	// RecentRestarts counts the restarts inside the last RestartWindow
	// (-restart-window, a Go duration), for people; health goes by
	// CrashLoop. In exec mode it is 0 and the window is absent.
	RecentRestarts int    `json:"recent_restarts"`
	RestartWindow  string `json:"restart_window,omitempty"`
	// QuickExits counts the child's runs in a row that each ended within
	// RestartWindow. CrashLoop is the agent's verdict, which health
	// reads: the child is in a crash loop from its third such run,
	// through its backoffs, until the current child has run for 10 s (or
	// a whole RestartWindow when that is shorter). The agent rewrites the
	// file when the verdict changes. Both are 0 and false in exec mode.
	QuickExits int       `json:"quick_exits"`
	CrashLoop  bool      `json:"crash_loop"`
	LastExit   *LastExit `json:"last_exit"`
	// TTY is the window size of the child's terminal (-tty); absent when
	// the child has none.
	TTY *TTY `json:"tty,omitempty"`
	// Turn is the conversation's state (-prompt); absent without one.
	Turn *Turn `json:"turn,omitempty"`
	// Watchers counts the watches that follow the child's output now
	// (fifobridge watch); absent when none does.
	Watchers int `json:"watchers,omitempty"`
}

// Turn is where a conversation (-prompt) stands: whether the child is
// ready for an ask, how many asks wait, and how many turns ended at a
// prompt, past their time limit, or with an incomplete input
// (-continuation).
type Turn struct {
	State      string `json:"state"`
	Queued     int    `json:"queued"`
	Answered   uint64 `json:"answered"`
	TimedOut   uint64 `json:"timed_out"`
	Incomplete uint64 `json:"incomplete"`
	// Unready, present only while the child has shown no prompt since it
	// started or since a turn was interrupted, says so.
	Unready *Unready `json:"unready,omitempty"`
}

// Transcript counts the bytes of a conversation's output (-prompt) that
// the output FIFO took, and those dropped because no reader took them.
type Transcript struct {
	Written uint64 `json:"written"`
	Dropped uint64 `json:"dropped"`
}

// TTY is a terminal's window size in character cells.
type TTY struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// LastExit is how the last child ended.
type LastExit struct {
	Code   int       `json:"code"`
	Signal string    `json:"signal"`
	At     time.Time `json:"at"`
}

// Requests counts exec-mode requests.
type Requests struct {
	Accepted  uint64 `json:"accepted"`
	Rejected  uint64 `json:"rejected"`
	Active    int64  `json:"active"`
	Completed uint64 `json:"completed"`
}

// Interval is how often the status file is rewritten; the contract
// asks for at least every 5 s and health calls 15 s stale.
const Interval = 2 * time.Second

// Writer rewrites the status file from a snapshot function every Interval
// and whenever Poke is called, until the context given to Run is done.
// It writes only once Attach gave it the directory that holds the file.
type Writer struct {
	path     string
	perm     os.FileMode
	snapshot func() Status
	poke     chan struct{}

	mu   sync.Mutex
	dir  *sharedir.Dir // nil until Attach
	name string
}

// NewWriter returns a Writer of the status file at path, which it gives
// mode perm (see FileMode).
func NewWriter(path string, perm os.FileMode, snapshot func() Status) *Writer {
	return &Writer{path: path, perm: perm, snapshot: snapshot, poke: make(chan struct{}, 1)}
}

// Attach gives w the directory of its file, opened by the caller, and the
// file's name in it; w writes through d until Detach. d must stay open
// until then. The file is written at once, before Attach returns: a client
// that finds the agent's FIFOs served reads this agent's mode, never a
// previous agent's file. A write that fails is tried again by Run.
func (w *Writer) Attach(d *sharedir.Dir, name string) {
	w.mu.Lock()
	w.dir, w.name = d, name
	w.mu.Unlock()
	if w.Write() != nil {
		w.Poke()
	}
}

// Detach makes w stop using its directory; a Write in progress ends first.
func (w *Writer) Detach() {
	w.mu.Lock()
	w.dir = nil
	w.mu.Unlock()
}

// Poke asks for a rewrite soon, without blocking.
func (w *Writer) Poke() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// coalesce is the least time between two writes that changes ask
// for: under a burst of exec requests, the file is rewritten at most this
// often, not once per request.
const coalesce = 50 * time.Millisecond

// Run writes the file every Interval and after each Poke until ctx is
// done. It does not write at once: Attach just did, and before Attach
// there is nowhere to write.
func (w *Writer) Run(ctx context.Context) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.poke:
			select {
			case <-ctx.Done():
				return
			case <-time.After(coalesce):
			}
		}
		w.Write()
	}
}

// Write writes the file now. Before Attach it fails: the directory is
// not open yet.
func (w *Writer) Write() error {
	// The snapshot is taken under the lock, so that of two writes at once
	// the later snapshot is the one left in the file.
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.snapshot()
	s.UpdatedAt = time.Now().UTC()
	if w.dir == nil {
		return fmt.Errorf("write status %s: its directory is not open", w.path)
	}
	return WriteAt(w.dir, w.name, s, w.perm)
}

// WriteAt replaces the file name of d with s, encoded with encoding/json,
// atomically: readers see the old content or the new, never a part.
// Everything goes through d's descriptor: a temporary file with a random
// name (randname) is created with O_EXCL|O_NOFOLLOW, given mode perm with
// fchmod, and renamed over name with renameat, which replaces a symbolic
// link at name rather than following it and refuses a directory there.
//
// On ext4 a rename over an existing file first starts the writeback of the
// new one (auto_da_alloc): BenchmarkWriteAt measures 0.3 to 0.8 ms a write
// on ext4, against 0.06 to 0.2 ms when the names were exchanged
// (renameat2 RENAME_EXCHANGE) and the old file unlinked. The agent writes
// in its own goroutine but for the write at start and the one at exit:
// under a millisecond of a container's start and stop, inside their noise,
// for the plain rename every reader of the code knows.
func WriteAt(d *sharedir.Dir, name string, s Status, perm os.FileMode) error {
	path := d.Join(name)
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("write status %s: %w", path, err)
	}
	tmp := ".status-" + randname.New() + ".tmp"
	f, err := d.Create(tmp, 0o600)
	if err != nil {
		return fmt.Errorf("write status %s: %w", path, err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Chmod(perm.Perm())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.Rename(tmp, name)
	}
	if err != nil {
		d.Remove(tmp)
		return fmt.Errorf("write status %s: %w", path, err)
	}
	return nil
}

// Read reads the status file at path. Its directory is resolved as
// sharedir.Enter does, so it needs only permission to enter it, and the file
// is opened through the directory's descriptor: a symbolic link there is
// not followed, and a FIFO there does not block.
func Read(path string) (Status, error) {
	d, err := sharedir.Enter(filepath.Dir(path))
	if err != nil {
		return Status{}, fmt.Errorf("read status: %w", err)
	}
	defer d.Close()
	return ReadAt(d, filepath.Base(path))
}

// ReadAt reads the status file name of d, as Read does, through d's
// descriptor: a client that entered DIR once reads DIR/status.json with it.
func ReadAt(d *sharedir.Dir, name string) (Status, error) {
	var s Status
	b, err := readFileAt(d, name)
	if err != nil {
		return s, fmt.Errorf("read status: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("read status %s: %w", d.Join(name), err)
	}
	return s, nil
}

// readFileAt reads the regular file name of d.
func readFileAt(d *sharedir.Dir, name string) ([]byte, error) {
	f, err := d.OpenFile(name, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// maxFile bounds what ReadOwnedAt reads: a status file is a few hundred
// bytes.
const maxFile = 1 << 20

// ReadOwnedAt reads the status file name of d as ReadAt does, but only
// when the agent of user uid wrote it: a regular file of uid that no
// other user may write (FileMode gives it no group or other write), which
// is checked on the descriptor read, before anything is. Where others may
// write DIR, whoever put a file of their own there cannot have it taken
// for the agent's.
func ReadOwnedAt(d *sharedir.Dir, name string, uid uint32) (Status, error) {
	var s Status
	f, err := d.OpenFile(name, unix.O_RDONLY, 0)
	if err != nil {
		return s, fmt.Errorf("read status: %w", err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return s, fmt.Errorf("read status %s: %w", d.Join(name), err)
	}
	if st.Uid != uid || st.Mode&0o022 != 0 {
		return s, fmt.Errorf("read status %s: it belongs to uid %d (mode %04o), not to the agent's user (uid %d) alone",
			d.Join(name), st.Uid, st.Mode&0o7777, uid)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return s, fmt.Errorf("read status %s: %w", d.Join(name), err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("read status %s: %w", d.Join(name), err)
	}
	return s, nil
}
