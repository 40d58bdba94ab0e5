//go:build linux

package client

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// DIR is resolved once: when another directory takes DIR's path while a
// request waits (a volume remounted, a directory renamed away and made
// again), Send still talks to the agent it sent to. Its cancel goes to
// that agent's input FIFO, never to another agent's at the same path.
func TestSendDirSwapped(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	a := startFakeAgent(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	s := startSend(t, ctx, Options{Dir: dir, Stdin: []byte("x")})
	req := a.next()

	require.NoError(t, os.Rename(dir, dir+".old"))
	a.dir = dir + ".old"
	require.NoError(t, os.Mkdir(dir, 0o755))
	other := startFakeAgent(t, newDirAt(t, dir))

	cancel()
	require.ErrorIs(t, s.wait(t).err, context.Canceled)
	c := a.next()
	require.True(t, c.IsCancel, "the agent sent to gets the cancel")
	require.Equal(t, req.ID, c.ID)
	select {
	case line := <-other.raw:
		t.Fatalf("the agent now at DIR's path got %q", line)
	default:
	}
	requireNoReplies(t, a.dir)
}
