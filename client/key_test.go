//go:build linux

package client

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// TestReplyKey: a reply FIFO is shared (0622) only when replies/ belongs to
// another user than root and the sender, and such a replies/ is trusted
// only when nobody but DIR's owner could have put it there: it is DIR's
// owner's, or DIR lets nobody else make entries (a sticky bit does not
// stop a member who comes before the agent). The key also says who else
// may make and rename DIR's entries.
func TestReplyKey(t *testing.T) {
	me := uint32(os.Geteuid())
	other := me + 1000
	for _, tc := range []struct {
		name           string
		dirUID, repUID uint32
		dirMode        uint32
		shared, refuse bool
		create, rename bool
	}{
		{"root's replies", 2002, 0, 0o2770, false, false, true, true},
		{"root's replies in root's sticky DIR", 0, 0, 0o3770, false, false, true, false},
		{"root's replies in root's closed DIR", 0, 0, 0o755, false, false, false, false},
		{"root's replies in another's closed DIR", other, 0, 0o755, false, false, false, true},
		{"the sender's own replies", 2002, me, 0o2770, false, false, true, true},
		{"the sender's own DIR", me, me, 0o700, false, false, false, false},
		{"agent owns DIR", other, other, 0o2770, true, false, true, true},
		{"agent owns sticky DIR", other, other, 0o3770, true, false, true, false},
		{"DIR only its owner writes", 0, other, 0o755, true, false, false, false},
		{"another's replies in a sticky DIR", 0, other, 0o3770, false, true, false, false},
		{"another's replies in a group-writable DIR", 0, other, 0o2770, false, true, false, false},
		{"another's replies in a world-writable DIR", other + 1, other, 0o777, false, true, false, false},
		{"another's replies in a sticky world-writable DIR", 0, other, 0o1777, false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := unix.Stat_t{Uid: tc.dirUID, Mode: unix.S_IFDIR | tc.dirMode}
			rst := unix.Stat_t{Uid: tc.repUID, Mode: unix.S_IFDIR | unix.S_ISVTX | 0o733}
			k, err := newReplyKey("/d", &dst, &rst)
			if tc.refuse {
				require.ErrorContains(t, err, "could learn the reply FIFO's name")
				require.ErrorContains(t, err, "needs a DIR owned by the agent's user")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.shared, k.shared)
			require.Equal(t, map[bool]os.FileMode{true: 0o622, false: 0o600}[tc.shared], k.mode())
			require.Equal(t, tc.create, k.othersCreate, "others may make entries")
			require.Equal(t, tc.rename, k.othersRename, "others may rename the agent's entries")
		})
	}
}

// TestReplyKeyInput: a shared reply's name, and any request where others
// may make entries in DIR, goes only into an input FIFO of the agent's
// user that nobody else may read.
func TestReplyKeyInput(t *testing.T) {
	me := uint32(os.Geteuid())
	for _, tc := range []struct {
		mode  uint32
		owner uint32
		key   replyKey
		ok    bool
	}{
		{0o620, me, replyKey{shared: true, agent: me}, true},
		{0o622, me, replyKey{shared: true, agent: me}, true},
		{0o660, me, replyKey{shared: true, agent: me}, false},
		{0o624, me, replyKey{shared: true, agent: me}, false},
		{0o620, me + 1, replyKey{shared: true, agent: me}, false}, // not the agent's
		{0o666, me, replyKey{agent: me}, true},                    // a 0600 reply in a closed DIR
		{0o620, me + 1, replyKey{agent: me}, true},                // the same
		{0o620, me, replyKey{agent: me, othersCreate: true}, true},
		{0o640, me, replyKey{agent: me, othersCreate: true}, false},             // a 0600 reply, but the request is read
		{0o620, me + 1, replyKey{agent: me, othersCreate: true}, false},         // someone else's FIFO in DIR
		{0o620, 0, replyKey{agent: 0, othersCreate: true, shared: false}, true}, // a root agent's
	} {
		i := fifo.Info{Uid: tc.owner, Mode: unix.S_IFIFO | tc.mode}
		err := tc.key.checkInput(i, "/d/in")
		if tc.ok {
			require.NoError(t, err, "mode %04o owner %d key %+v", tc.mode, tc.owner, tc.key)
		} else {
			require.ErrorContains(t, err, "may be read by users other than the agent's", "mode %04o owner %d key %+v", tc.mode, tc.owner, tc.key)
		}
	}
}

// TestReplyKeyMayFollow: an input FIFO the status file names outside DIR
// (the run's -in) is followed only where nobody but the agent's user,
// root and the sender may replace DIR's entries, the status file among
// them.
func TestReplyKeyMayFollow(t *testing.T) {
	dir, err := sharedir.Enter(t.TempDir())
	require.NoError(t, err)
	defer dir.Close()
	moved := input{dir: dir, fifos: dir, name: inName, file: "myin"}
	own := dirInput(dir, inName)
	require.NoError(t, replyKey{}.mayFollow(moved))
	require.NoError(t, replyKey{othersCreate: true}.mayFollow(moved), "others may make entries, but not replace the agent's (sticky)")
	require.NoError(t, replyKey{othersCreate: true, othersRename: true}.mayFollow(own), "DIR/in is checked as ever")
	err = replyKey{othersCreate: true, othersRename: true}.mayFollow(moved)
	require.ErrorIs(t, err, ErrNoAgent)
	require.ErrorContains(t, err, "not followed")
}
