package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestReplyKey: a reply FIFO is shared (0622) only when replies/ belongs to
// another user than root and the sender, and such a replies/ is trusted
// only when nobody but DIR's owner could have put it there.
func TestReplyKey(t *testing.T) {
	me := uint32(os.Geteuid())
	other := me + 1000
	for _, tc := range []struct {
		name           string
		dirUID, repUID uint32
		dirMode        uint32
		shared, refuse bool
	}{
		{"root's replies", 2002, 0, 0o2770, false, false},
		{"the sender's own replies", 2002, me, 0o2770, false, false},
		{"agent owns DIR", other, other, 0o2770, true, false},
		{"DIR only its owner writes", 0, other, 0o755, true, false},
		{"sticky DIR", 0, other, 0o3770, true, false},
		{"another's replies in a group-writable DIR", 0, other, 0o2770, false, true},
		{"another's replies in a world-writable DIR", other + 1, other, 0o777, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := unix.Stat_t{Uid: tc.dirUID, Mode: unix.S_IFDIR | tc.dirMode}
			rst := unix.Stat_t{Uid: tc.repUID, Mode: unix.S_IFDIR | unix.S_ISVTX | 0o733}
			k, err := newReplyKey("/d", &dst, &rst)
			if tc.refuse {
				require.ErrorContains(t, err, "could learn the reply FIFO's name")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.shared, k.shared)
			require.Equal(t, map[bool]os.FileMode{true: 0o622, false: 0o600}[tc.shared], k.mode())
		})
	}
}

// TestReplyKeyInput: a shared reply's name goes only into an input FIFO
// of the agent's user that nobody else may read.
func TestReplyKeyInput(t *testing.T) {
	me := uint32(os.Geteuid())
	d := t.TempDir()
	for _, tc := range []struct {
		mode   uint32
		agent  uint32
		shared bool
		ok     bool
	}{
		{0o620, me, true, true},
		{0o622, me, true, true},
		{0o660, me, true, false},
		{0o624, me, true, false},
		{0o620, me + 1, true, false}, // not the agent's
		{0o666, me, false, true},     // a 0600 reply: its name is no key
	} {
		p := filepath.Join(d, "in")
		os.Remove(p)
		require.NoError(t, unix.Mkfifo(p, 0o600))
		require.NoError(t, unix.Chmod(p, tc.mode))
		r, err := os.OpenFile(p, os.O_RDWR, 0)
		require.NoError(t, err)
		err = replyKey{shared: tc.shared, agent: tc.agent}.checkInput(r, p)
		r.Close()
		if tc.ok {
			require.NoError(t, err, "mode %04o agent %d", tc.mode, tc.agent)
		} else {
			require.ErrorContains(t, err, "may be read by users other than the agent's", "mode %04o agent %d", tc.mode, tc.agent)
		}
	}
}
