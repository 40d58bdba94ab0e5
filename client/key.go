//go:build linux

package client

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
)

// replyKey says who may write to a reply FIFO, and what the input FIFO
// that carries its name must be. The agent that made replies/ owns it.
// When that is root or send's own user, the FIFO is 0600 and only they
// may open it. An agent of another user can only write to it through its
// group or other bits, and which groups it has is not known here: the
// FIFO is 0622 then, and its name is the only key to it (replies/ cannot
// be listed, the name is 128 random bits). So before the name is written
// anywhere, send makes sure that nobody but the agent's user can learn it:
//
//   - replies/ is the agent's own: it belongs to DIR's owner, or DIR lets
//     nobody else make entries (no group or other write). The sticky bit
//     is not enough: before the agent's first start, anyone who may make
//     entries may make a replies/ of their own, and the FIFOs with it, and
//     play the agent. An agent that is not root therefore wants a DIR of
//     its own user. The agent refuses a replies/ it did not make.
//   - the input FIFO the line goes to (looked at on the very descriptor
//     written to) belongs to that user and no other user may read it.
//
// Where others may make entries in DIR, that last rule holds for every
// request, the agent root or not: a FIFO someone else put in place of
// DIR/in would let them read it. And the FIFO must be the one the agent
// serves under its name (checkServed): one who may rename DIR's entries
// could otherwise swap DIR/in and DIR/ask, two FIFOs of the agent's,
// and have an ask read as the child's input, which it may echo where the
// group reads.
//
// It does not guard against root, nor against a user who can write DIR
// itself where DIR belongs to the agent's user; send still takes only
// frames that carry its own request id.
type replyKey struct {
	shared bool   // 0622: whoever learns the name may write to the FIFO
	agent  uint32 // the owner of replies/: the agent's user
	// othersCreate says users other than DIR's owner may make entries in
	// DIR (group or other write); othersRename that someone other than
	// the agent's user, root and the sender may rename or replace the
	// agent's entries there (no sticky bit, or DIR is a third user's).
	othersCreate, othersRename bool
}

// newReplyKey is the key of a reply FIFO in replies/ (rst) of DIR (dst,
// named dir). It fails when the FIFO would be 0622 and replies/ may have
// been put there by someone other than the agent.
func newReplyKey(dir string, dst, rst *unix.Stat_t) (replyKey, error) {
	me := uint32(os.Geteuid())
	k := replyKey{agent: rst.Uid, othersCreate: dst.Mode&0o022 != 0}
	ownerTrusted := dst.Uid == 0 || dst.Uid == rst.Uid || dst.Uid == me
	k.othersRename = k.othersCreate && dst.Mode&unix.S_ISVTX == 0 || !ownerTrusted
	if rst.Uid == 0 || rst.Uid == me {
		return k, nil
	}
	k.shared = true
	if rst.Uid != dst.Uid && k.othersCreate {
		return replyKey{}, fmt.Errorf("%s/replies belongs to uid %d, not to the owner of %s (uid %d), and others may make entries in %s (mode %04o): "+
			"it may not be the agent's, and whoever made it could learn the reply FIFO's name; refusing "+
			"(an agent that is not root needs a DIR owned by the agent's user, mode 2770 or 3770)",
			dir, rst.Uid, dir, dst.Uid, dir, dst.Mode&0o7777)
	}
	return k, nil
}

// mayFollow fails for an input FIFO outside DIR (the run's -in put it
// elsewhere) where the status file that names it could be another
// user's: one who may replace the agent's entries in DIR could name any
// FIFO of the agent's user there, another agent's input among them.
func (k replyKey) mayFollow(in input) error {
	if in.file == "" || !k.othersRename {
		return nil
	}
	return fmt.Errorf("%w: the status file names %s, outside %s, as the input; users other than the agent's may replace the status file there, so it is not followed",
		ErrNoAgent, in.path(), in.dir.Path())
}

// mode is the reply FIFO's mode.
func (k replyKey) mode() os.FileMode {
	if k.shared {
		return 0o622
	}
	return 0o600
}

// checkInput fails when users other than the agent's may read the input
// FIFO i describes (at path), where it matters: where the reply FIFO's
// name is its only key, or where others may make entries in DIR and so
// could have put their own FIFO there. They would learn the name from
// the request line, or the request.
func (k replyKey) checkInput(i fifo.Info, path string) error {
	if !k.shared && !k.othersCreate {
		return nil
	}
	if i.Uid != k.agent || i.OthersMayRead(int(k.agent)) {
		return fmt.Errorf("%s (uid %d, mode %04o) may be read by users other than the agent's (uid %d), who would learn the request and the reply FIFO's name; "+
			"refusing (an agent makes it 0620 for -perm 0660)", path, i.Uid, i.Mode&0o7777, k.agent)
	}
	return nil
}
