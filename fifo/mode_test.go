//go:build linux

package fifo

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestModes: -perm gives its write bits to the input FIFOs and its read
// bits to the output FIFO; the owner always reads and writes both.
func TestModes(t *testing.T) {
	for _, tc := range []struct{ perm, in, out os.FileMode }{
		{0o660, 0o620, 0o640},
		{0o666, 0o622, 0o644},
		{0o600, 0o600, 0o600},
		{0o640, 0o600, 0o640},
		{0o602, 0o602, 0o600},
		{0o777, 0o622, 0o644},
		{0o000, 0o600, 0o600},
		{0o660 | os.ModeSetgid | os.ModeSticky, 0o620, 0o640},
	} {
		require.Equal(t, tc.in, InputMode(tc.perm), "InputMode(%04o)", tc.perm)
		require.Equal(t, tc.out, OutputMode(tc.perm), "OutputMode(%04o)", tc.perm)
	}
}

// TestOthersMayRead: group or other read bits, or an owner who is neither
// the user asked about nor root.
func TestOthersMayRead(t *testing.T) {
	for _, tc := range []struct {
		mode     uint32
		owner    uint32
		uid      int
		mayRead  bool
		describe string
	}{
		{0o620, 1000, 1000, false, "the agent's own, write-only to others"},
		{0o600, 0, 1000, false, "root's"},
		{0o640, 1000, 1000, true, "group may read"},
		{0o604, 1000, 1000, true, "others may read"},
		{0o200, 2000, 1000, true, "another user's, who may chmod it"},
		{0o620, 0, 0, false, "root's, agent root"},
		{0o620, 2000, 0, true, "another user's, agent root"},
	} {
		st := unix.Stat_t{Mode: unix.S_IFIFO | tc.mode, Uid: tc.owner}
		require.Equal(t, tc.mayRead, OthersMayRead(&st, tc.uid), tc.describe)
	}
}

// TestMayRead: root reads anything; the owner by the owner's bits alone,
// a member of the group by the group's alone, anyone else only when both
// the group's and the others' bits let it, since it may be in the group
// through a group it was not shown in (found by a second user who kept
// its reply FIFO out of the output FIFO's group to be judged by the
// others' bits).
func TestMayRead(t *testing.T) {
	for _, tc := range []struct {
		mode     uint32
		uid, gid uint32
		mayRead  bool
		describe string
	}{
		{0o640, 0, 0, true, "root"},
		{0o000, 0, 5, true, "root, no bits"},
		{0o640, 1000, 1000, true, "the owner"},
		{0o040, 1000, 3000, false, "the owner without the owner's bit, though in the group"},
		{0o640, 2000, 3000, true, "a member of the group"},
		{0o604, 2000, 3000, false, "a member of the group without the group's bit, though others may"},
		{0o640, 2001, 2001, false, "anyone else, 0640"},
		{0o644, 2001, 2001, true, "anyone else, 0644"},
		{0o604, 2001, 2001, false, "anyone else, 0604: may be in the group, whose bits say no"},
		{0o606, 2001, 2001, false, "anyone else, 0606"},
	} {
		i := Info{Uid: 1000, Gid: 3000, Mode: unix.S_IFIFO | tc.mode}
		require.Equal(t, tc.mayRead, i.MayRead(tc.uid, tc.gid), tc.describe)
	}
}
