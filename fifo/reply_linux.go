package fifo

import (
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/sharedir"
	"golang.org/x/sys/unix"
)

// Reply is a client's reply FIFO, opened for writing by its name in a
// replies directory. It is written to only while that name still names
// the FIFO first opened: once the FIFO is replaced, moved, removed or given
// a second name, Write refuses with ErrReplaced. No error of OpenReply or
// of a Reply names the FIFO (see Unnamed): the name is its sender's
// secret.
type Reply struct {
	f    *os.File
	dir  *sharedir.Dir
	name string
	st   unix.Stat_t // of the FIFO opened
}

// OpenReply opens the FIFO name of replies for writing, without waiting,
// through the directory's descriptor. A symbolic link, anything that is not
// a FIFO, and a FIFO with more than one name (a hard link could make the
// input FIFO, or another client's reply FIFO, a reply FIFO) are refused with
// ErrNotFIFO or sharedir.ErrSymlink, and nothing is written to them. When nobody has
// the FIFO open for reading the error is ErrNoReader. replies must stay open
// as long as the Reply is.
func OpenReply(replies *sharedir.Dir, name string) (*Reply, error) {
	f, err := OpenWriterNowAt(replies, name)
	if err != nil {
		return nil, Unnamed("open reply fifo", err)
	}
	r := &Reply{f: f, dir: replies, name: name}
	if err := unix.Fstat(int(f.Fd()), &r.st); err != nil {
		f.Close()
		return nil, Unnamed("open reply fifo", err)
	}
	if r.st.Nlink != 1 {
		f.Close()
		return nil, fmt.Errorf("open reply fifo: %w: it has other names (hard links)", ErrNotFIFO)
	}
	if err := r.Check(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// Check returns nil while the name of r in its replies directory still
// names the FIFO r has open, and that FIFO has no other name; otherwise
// ErrReplaced. It compares device and inode (fstatat with
// AT_SYMLINK_NOFOLLOW relative to the directory's descriptor).
func (r *Reply) Check() error {
	now, err := r.dir.Stat(r.name)
	if err != nil {
		return fmt.Errorf("reply fifo: %w (%w)", ErrReplaced, innermost(err))
	}
	if now.Mode&unix.S_IFMT != unix.S_IFIFO || !sameFile(&now, &r.st) {
		return fmt.Errorf("reply fifo: %w: it names another file now", ErrReplaced)
	}
	if now.Nlink != 1 {
		return fmt.Errorf("reply fifo: %w: it has other names (hard links)", ErrReplaced)
	}
	return nil
}

// Write writes p to the FIFO after Check passed; otherwise it writes
// nothing and returns Check's error. It waits while the FIFO is full, up to
// the write deadline.
func (r *Reply) Write(p []byte) (int, error) {
	if err := r.Check(); err != nil {
		return 0, err
	}
	n, err := r.f.Write(p)
	return n, Unnamed("write reply fifo", err)
}

// SetWriteDeadline sets the deadline for Write, as os.File's does.
func (r *Reply) SetWriteDeadline(t time.Time) error { return r.f.SetWriteDeadline(t) }

// Owner returns the user and the group of the FIFO r has open, as it was
// when it was opened.
func (r *Reply) Owner() (uid, gid uint32) { return r.st.Uid, r.st.Gid }

// Name returns the reply's name in its directory.
func (r *Reply) Name() string { return r.name }

// File returns the open FIFO, for callers that need the *os.File itself
// (closing it, waking a blocked write). Writing to it directly skips Check.
func (r *Reply) File() *os.File { return r.f }

// Close closes the FIFO.
func (r *Reply) Close() error { return r.f.Close() }

// Remove removes r's name from its replies directory while that name
// still names the FIFO r has open (Check), and never anything else: the
// replies directory is sticky, so that only its owner, the agent, and the
// FIFO's owner can replace the name in between. Its error names no FIFO.
func (r *Reply) Remove() error {
	if err := r.Check(); err != nil {
		return err
	}
	return Unnamed("remove reply fifo", r.dir.Remove(r.name))
}
