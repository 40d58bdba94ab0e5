package fifo

import (
	"os"

	"golang.org/x/sys/unix"
)

// The modes of the agent's FIFOs. -perm says who may use them, not their
// mode: the classes it lets write may write an input FIFO (Source), the
// classes it lets read may read an output FIFO (Sink). Nobody but the
// agent's user reads an input FIFO, whose lines name reply FIFOs (where the
// agent is another non-root user, a reply FIFO's name is the only key to
// it), and nobody but it writes an output FIFO. The agent's user reads and
// writes both: it opens them O_RDWR.

// InputMode is the mode of an input FIFO made for -perm perm: read and
// write for its owner, and only perm's write bits for its group and
// others (0660 gives 0620).
func InputMode(perm os.FileMode) os.FileMode { return 0o600 | perm&0o022 }

// OutputMode is the mode of an output FIFO made for -perm perm: read and
// write for its owner, and only perm's read bits for its group and others
// (0660 gives 0640).
func OutputMode(perm os.FileMode) os.FileMode { return 0o600 | perm&0o044 }

// OthersMayRead reports whether a user other than uid and root may read
// the file st describes, as far as its owner and mode tell: its group or
// others have the read bit (an ACL's mask shows there too), or it belongs
// to another user, who may give itself any mode.
func OthersMayRead(st *unix.Stat_t, uid int) bool {
	return st.Mode&0o044 != 0 || int(st.Uid) != uid && st.Uid != 0
}

// MayRead reports whether the mode of the file i describes lets user uid
// read it, as the kernel's permission check would for that user, where
// gid is the one group the user is known to be in: root may; the owner
// by the owner's bits; a user in the file's group by the group's. For
// anyone else it cannot tell whether the user is in the file's group
// all the same (a supplementary group it was not shown), and the kernel
// would then apply the group's bits, not the others': such a user may
// read only when both let it. It knows no ACL and no capability but
// root's.
func (i Info) MayRead(uid, gid uint32) bool {
	switch {
	case uid == 0:
		return true
	case uid == i.Uid:
		return i.Mode&0o400 != 0
	case gid == i.Gid:
		return i.Mode&0o040 != 0
	}
	return i.Mode&0o044 == 0o044
}
