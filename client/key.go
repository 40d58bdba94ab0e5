package client

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
)

// replyKey says who may write to a reply FIFO. The agent that made
// replies/ owns it. When that is root or send's own user, the FIFO is
// 0600 and only they may open it. An agent of another user can only write
// to it through its group or other bits, and which groups it has is not
// known here: the FIFO is 0622 then, and its name is the only key to it
// (replies/ cannot be listed, the name is 128 random bits). So before the
// name is written anywhere, send makes sure that nobody but the agent's
// user can learn it:
//
//   - replies/ is the agent's own: it belongs to DIR's owner, or DIR lets
//     nobody else replace its entries (no group or other write, or the
//     sticky bit); the agent refuses a replies/ it did not make;
//   - the input FIFO the line goes to (looked at on the very descriptor
//     written to) belongs to that user and no other user may read it.
//
// It does not guard against root, nor against a user who can write DIR
// itself where DIR belongs to the agent's user; send still takes only
// frames that carry its own request id.
type replyKey struct {
	shared bool   // 0622: whoever learns the name may write to the FIFO
	agent  uint32 // the owner of replies/: the agent's user
}

// newReplyKey is the key of a reply FIFO in replies/ (rst) of DIR (dst,
// named dir). It fails when the FIFO would be 0622 and replies/ may have
// been put there by someone other than the agent.
func newReplyKey(dir string, dst, rst *unix.Stat_t) (replyKey, error) {
	k := replyKey{agent: rst.Uid}
	if rst.Uid == 0 || int(rst.Uid) == os.Geteuid() {
		return k, nil
	}
	k.shared = true
	if rst.Uid != dst.Uid && dst.Mode&0o022 != 0 && dst.Mode&unix.S_ISVTX == 0 {
		return replyKey{}, fmt.Errorf("%s/replies belongs to uid %d, not to the owner of %s (uid %d), and %s (mode %04o) lets others replace it: "+
			"whoever did could learn the reply FIFO's name; refusing (make %s sticky, or the agent's user its owner)",
			dir, rst.Uid, dir, dst.Uid, dir, dst.Mode&0o7777, dir)
	}
	return k, nil
}

// mode is the reply FIFO's mode.
func (k replyKey) mode() os.FileMode {
	if k.shared {
		return 0o622
	}
	return 0o600
}

// checkInput fails when the reply FIFO's name is its only key and users
// other than the agent's may read the input FIFO w (at path): they would
// learn the name from the request line.
func (k replyKey) checkInput(w *os.File, path string) error {
	if !k.shared {
		return nil
	}
	rc, err := w.SyscallConn()
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	var st unix.Stat_t
	var serr error
	cerr := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) })
	if err := errors.Join(cerr, serr); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Uid != k.agent || fifo.OthersMayRead(&st, int(k.agent)) {
		return fmt.Errorf("%s (uid %d, mode %04o) may be read by users other than the agent's (uid %d), who would learn the reply FIFO's name, "+
			"the only key to it; refusing (an agent makes it 0620 for -perm 0660)", path, st.Uid, st.Mode&0o7777, k.agent)
	}
	return nil
}
