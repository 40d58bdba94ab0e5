//go:build linux

package bridge

import (
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/protocol"
	"golang.org/x/sys/unix"
)

// Permission bits, as in the "other" triple of a mode.
const (
	permW = 0o2
	permX = 0o1
)

// warnChildAccess logs a warning for each way a children's user (-user,
// and each of -allow-users, a session's) could drive the agent itself,
// because -perm or the directories' own permissions let it: write the
// input FIFO (in sessions mode the control FIFO, whose modes every
// session's input FIFOs share), replace it, or make reply FIFOs. A child
// that can do that is not sandboxed from its own agent, nor a session
// from another. Only the entries themselves are looked at, not the
// directories above them, so a warning may name access that a parent
// directory still denies.
func (a *agent) warnChildAccess() {
	for _, cred := range a.cfg.ChildUsers() {
		flag := "-user"
		if cred != a.cfg.Credential {
			flag = "-allow-users"
		}
		for _, w := range a.childAccess(cred) {
			a.cfg.Log.Warn(flag+": the child's user can drive the agent: "+w,
				"user", fmt.Sprintf("%d:%d", cred.Uid, cred.Gid))
		}
	}
}

// childAccess lists what cred may do that only the agent's clients should.
func (a *agent) childAccess(cred *syscall.Credential) []string {
	var found []string
	in := filepath.Base(a.cfg.In)
	if st, err := a.inDir.Stat(in); err == nil && may(&st, cred, permW) {
		found = append(found, fmt.Sprintf("it can write the input FIFO %s (mode %04o; see -perm)", a.cfg.In, st.Mode&0o7777))
	}
	for _, c := range []struct {
		on         bool
		name, what string
	}{{a.converses(), conversation.AskName, "ask"}, {a.servesControl(), protocol.StreamControl, "control"}} {
		if !c.on || a.dir == nil {
			continue
		}
		if st, err := a.dir.Stat(c.name); err == nil && may(&st, cred, permW) {
			found = append(found, fmt.Sprintf("it can write the %s FIFO %s (mode %04o; see -perm)", c.what, a.dir.Join(c.name), st.Mode&0o7777))
		}
	}
	var dst unix.Stat_t
	if unix.Fstat(a.inDir.Fd(), &dst) == nil && may(&dst, cred, permW|permX) {
		found = append(found, fmt.Sprintf("it can replace the input FIFO: %s is writable to it (mode %04o)", a.inDir.Path(), dst.Mode&0o7777))
	}
	if a.replies == nil || a.dir == nil {
		return found
	}
	var rst unix.Stat_t
	if unix.Fstat(a.dir.Fd(), &dst) == nil && may(&dst, cred, permX) &&
		unix.Fstat(a.replies.Fd(), &rst) == nil && may(&rst, cred, permW|permX) {
		found = append(found, fmt.Sprintf("it can make reply FIFOs in %s (directory %s has mode %04o)", a.replies.Path(), a.dir.Path(), dst.Mode&0o7777))
	}
	return found
}

// may reports whether a process with cred (no supplementary groups) has
// all the permission bits want on st.
func may(st *unix.Stat_t, cred *syscall.Credential, want uint32) bool {
	if cred.Uid == 0 {
		return true
	}
	mode := st.Mode & 0o777
	switch {
	case cred.Uid == st.Uid:
		mode >>= 6
	case cred.Gid == st.Gid:
		mode >>= 3
	}
	return mode&want == want
}
