//go:build linux

package client

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/sharedir"
)

// agentIdentity is an Asker's memory of which agent serves DIR (identity),
// kept with the status file it was read from: a look stats the file (one
// fstatat through DIR's descriptor) and reads it again only when it is
// another file or changed, which it is after nearly every turn (the
// agent rewrites it with the turn's counts). Only the two fields that
// name the agent are decoded then, from one read of the file's size
// (decoding the whole status took 0.05 ms of cold caches more). The file
// is read at the turn's start, not held open until its watch may ask:
// the agent puts a new one in place (renameat) after each turn, and the
// close of the last descriptor of a file replaced so is where the
// filesystem frees it (1 to 6 ms on ext4). A new agent, which writes its
// own file before it serves, is always seen.
type agentIdentity struct {
	st unix.Stat_t // of the status file read; Ino 0: none read
	id string
}

// servingAgent is the identity of the agent that serves DIR as a turn
// begins, for the turn's watch: the one of the turn before while the
// reply FIFO is still held by the agent that answered it (it keeps the
// last asker's FIFO open for its next ask, and it holds the lock on DIR
// while it lives: no other agent serves DIR meanwhile), which costs one
// poll(2); otherwise the one that DIR's status file names (agentIdentity),
// which costs a stat, and a read when the file changed. Asks come from an
// agent's harness tens of milliseconds apart, by which time the agent has
// rewritten the file with the last turn's counts, and each of those
// system calls finds cold caches: reading the file was 0.1 ms of a
// 1 ms turn on a two-core VM.
func (a *Asker) servingAgent() string {
	if a.agent.id != "" && a.reply != nil && a.reply.agentHolds() {
		return a.agent.id
	}
	return a.agent.of(a.dir)
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
	id, err := readIdentity(dir, st.Size)
	if err != nil {
		k.st = unix.Stat_t{}
		return ""
	}
	// Stat first, read after: a file replaced in between is read anew at
	// the next turn, its stat being another's.
	k.st, k.id = st, id
	return k.id
}

// readIdentity reads the identity of the agent that wrote DIR's status
// file, of about size bytes, as identity names it: its pid and start.
func readIdentity(dir *sharedir.Dir, size int64) (string, error) {
	f, err := dir.OpenFile(statusName, unix.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// A buffer of the size stat gave, and one byte more: a file of that
	// size is read in one read, which comes back short at its end.
	b := make([]byte, min(max(size, 0), maxStatus)+1)
	n := 0
	for {
		m, err := f.Read(b[n:])
		n += m
		if err == io.EOF || err == nil && n < len(b) {
			break
		}
		if err != nil {
			return "", err
		}
		if len(b) > maxStatus {
			return "", fmt.Errorf("read status %s: over %d bytes", dir.Join(statusName), maxStatus)
		}
		b = append(b, make([]byte, len(b))...) // it grew since the stat
	}
	b = b[:n]
	// The fields identity takes, under status.Status's names.
	var s struct {
		PID       int       `json:"pid"`
		StartedAt time.Time `json:"started_at"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return "", fmt.Errorf("read status %s: %w", dir.Join(statusName), err)
	}
	return identityOf(s.PID, s.StartedAt), nil
}

// maxStatus bounds what readIdentity reads: a status file is a few kB.
const maxStatus = 1 << 20
