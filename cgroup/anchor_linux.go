package cgroup

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// The anchor: one empty cgroup per agent, made by Open before any child's
// cgroup and locked (see lock_linux.go) until Close removes it, last.
// Its name says which agent it stands for,
// fifobridge-<pid namespace>-<pid>-<start time>-a<try>, and the agent's
// children's cgroups are named by the same agent and hold no lock: while
// the anchor's lock is held, every cgroup of that agent is a live
// agent's. So an agent holds one descriptor for the lock, however many
// children it runs.
//
// A sweep (see leftovers) may take a new anchor between its mkdir and its
// lock, and remove it. The agent then removes what is left of it and
// makes its anchor again under the next try's name, never the same
// one: the sweep removes by name, and would otherwise remove the new
// anchor. No child cgroup is made before the anchor is locked.

// anchorTries is how many names an agent tries for its anchor; a sweep
// looks for an agent's anchor under each of them (and any other its
// listing shows).
const anchorTries = 4

// makeAnchor makes and locks the agent's anchor in dir, and returns its
// path and its descriptor, which holds the lock.
func makeAnchor(dir string, self agentID) (path string, fd int, err error) {
	for try := range uint64(anchorTries) {
		path = filepath.Join(dir, self.anchorName(try))
		fd, err = makeLocked(path)
		if !errors.Is(err, errLockLost) {
			return path, fd, err
		}
		// A sweep took it. Empty, it goes at once, whoever holds its
		// lock; the sweep's own rmdir then finds it gone.
		unix.Rmdir(path)
	}
	return "", -1, fmt.Errorf("make cgroup %s: %w", path, err)
}

// lockedAnchor is an anchor of another agent whose lock a sweep holds.
type lockedAnchor struct {
	path string
	fd   int
}

// lockAnchors takes the locks of agent a's anchors in dir: those under
// each try's name, and those a listing showed (seen, their tries), in
// the order of their tries, so that of two sweeps that look at the same
// agent one gives up at once. held is true when one of them is locked by
// another (a live agent, or another sweep) or cannot be looked at; then
// no lock is kept. An empty list with held false: a has no anchor (an
// agent of an older version, or one whose anchor a sweep removed).
func lockAnchors(dir string, a agentID, seen []uint64) (anchors []lockedAnchor, held bool) {
	tries := make([]uint64, 0, anchorTries+len(seen))
	for try := range uint64(anchorTries) {
		tries = append(tries, try)
	}
	tries = append(tries, seen...)
	slices.Sort(tries)
	for _, try := range slices.Compact(tries) {
		path := filepath.Join(dir, a.anchorName(try))
		fd, err := tryLock(path)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			unlockAnchors(anchors)
			return nil, true
		}
		anchors = append(anchors, lockedAnchor{path: path, fd: fd})
	}
	return anchors, false
}

// unlockAnchors lets go of the anchors' locks.
func unlockAnchors(anchors []lockedAnchor) {
	for _, l := range anchors {
		unix.Close(l.fd)
	}
}
