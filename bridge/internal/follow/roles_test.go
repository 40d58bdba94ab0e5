//go:build linux

package follow

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// TestRoles: a FIFO of the agent's user serves one end for the agent's
// life, whatever names it takes; FIFOs of other users are not
// remembered, and past maxRemembered no new FIFO is served.
func TestRoles(t *testing.T) {
	me := uint32(os.Geteuid())
	fifoOf := func(ino uint64, uid uint32) fifo.Info {
		return fifo.Info{ID: fifo.ID{Dev: 1, Ino: ino, Btime: 7}, Uid: uid, Nlink: 1}
	}
	r := NewRoles()
	require.NoError(t, r.Claim(RoleIn, fifoOf(10, me)))
	require.NoError(t, r.Claim(RoleAsk, fifoOf(11, me)))
	require.NoError(t, r.Claim(RoleOut, fifoOf(12, me)))

	// DIR/in and DIR/ask swapped: neither end takes the other's FIFO.
	require.ErrorIs(t, r.Claim(RoleIn, fifoOf(11, me)), ErrOtherRole)
	require.ErrorIs(t, r.Claim(RoleAsk, fifoOf(10, me)), ErrOtherRole)
	require.ErrorIs(t, r.Claim(RoleOut, fifoOf(10, me)), ErrOtherRole)
	id, ok := r.Current(RoleIn)
	require.True(t, ok)
	require.Equal(t, uint64(10), id.Ino, "a refused claim changes nothing")

	// A new FIFO made again, then the old one back: both are the end's.
	require.NoError(t, r.Claim(RoleIn, fifoOf(20, me)))
	require.NoError(t, r.Claim(RoleIn, fifoOf(10, me)))
	// Once served as in, never as ask, even after in moved on.
	require.ErrorIs(t, r.Claim(RoleAsk, fifoOf(20, me)), ErrOtherRole)

	// Another user's FIFO: served where it is put, not remembered.
	require.NoError(t, r.Claim(RoleIn, fifoOf(30, me+1)))
	require.NoError(t, r.Claim(RoleAsk, fifoOf(30, me+1)))
	id, _ = r.Current(RoleAsk)
	require.Equal(t, uint64(30), id.Ino)
	_, ok = r.Current("nothing")
	require.False(t, ok)

	// One released with a name left stays the end's; one with none is
	// forgotten: its inode number may come back as another FIFO.
	r.Release(RoleIn, fifoOf(20, me))
	require.ErrorIs(t, r.Claim(RoleAsk, fifoOf(20, me)), ErrOtherRole)
	gone := fifoOf(20, me)
	gone.Nlink = 0
	r.Release(RoleAsk, gone) // not the ask end's: nothing
	require.ErrorIs(t, r.Claim(RoleAsk, fifoOf(20, me)), ErrOtherRole)
	r.Release(RoleIn, gone)
	require.NoError(t, r.Claim(RoleAsk, fifoOf(20, me)))
	// The same inode number born again is another FIFO.
	reborn := fifoOf(11, me)
	reborn.Btime = 8
	require.NoError(t, r.Claim(RoleIn, reborn))

	// Past the bound, no new FIFO of the agent's user is served; known
	// ones still are.
	for ino := uint64(1000); len(r.owner) < maxRemembered; ino++ {
		require.NoError(t, r.Claim(RoleIn, fifoOf(ino, me)))
	}
	require.ErrorContains(t, r.Claim(RoleIn, fifoOf(99999, me)), "serves no new one")
	require.NoError(t, r.Claim(RoleIn, fifoOf(10, me)))
}

// TestRolesPending: a pending end (its FIFO missing when it was opened)
// is served with nothing claimed, and the first FIFO its follower serves
// is claimed then: named as the end's, never another end's.
func TestRolesPending(t *testing.T) {
	dir := t.TempDir()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	r := NewRoles()
	src := fifo.PendingSourceAt(d, "ask")
	defer src.Close()
	require.NoError(t, r.Serve(RoleAsk, src))
	_, ok := r.Current(RoleAsk)
	require.False(t, ok, "nothing served yet")

	changed, created, err := src.Reopen(true, 0o600, func(i fifo.Info) error { return r.Claim(RoleAsk, i) })
	require.NoError(t, err)
	require.True(t, changed && created)
	i, err := src.Describe()
	require.NoError(t, err)
	id, ok := r.Current(RoleAsk)
	require.True(t, ok)
	require.True(t, i.Same(id))
	require.ErrorIs(t, r.Claim(RoleIn, i), ErrOtherRole)
}
