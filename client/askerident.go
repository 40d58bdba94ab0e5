//go:build linux

package client

import (
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// agentIdentity is an Asker's memory of which agent serves DIR (identity),
// kept with the status file it was read from: every turn stats the file
// (one fstatat through DIR's descriptor) and reads it again only when it
// is another file or changed, instead of opening and reading it per
// turn. The agent puts a new status file in place (renameat) whenever it
// writes one, so a new agent, which writes its own before it serves, is
// always seen.
type agentIdentity struct {
	st unix.Stat_t // of the status file read; Ino 0: none read
	id string
}

// of returns the identity of the agent whose status file DIR has now, or
// "" when there is none to read, as newAgentWatch takes it.
func (k *agentIdentity) of(dir *sharedir.Dir) string {
	st, err := dir.Stat(statusName)
	if err != nil {
		k.st = unix.Stat_t{}
		return ""
	}
	if k.st.Ino != 0 && st.Dev == k.st.Dev && st.Ino == k.st.Ino && st.Size == k.st.Size && st.Mtim == k.st.Mtim && st.Ctim == k.st.Ctim {
		return k.id
	}
	s, err := status.ReadHeadAt(dir, statusName)
	if err != nil {
		k.st = unix.Stat_t{}
		return ""
	}
	// Stat first, read after: a file replaced in between is read anew at
	// the next turn, its stat being another's.
	k.st, k.id = st, identity(s)
	return k.id
}
