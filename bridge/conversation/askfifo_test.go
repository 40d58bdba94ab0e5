//go:build linux

package conversation

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/sharedir"
)

// A DIR/ask removed before the conversation opened it (a session's, or
// stream mode's, between the agent making it and serving it) is followed
// from the start: with Create it is made again, with its mode, once it
// was missing for a second, claimed as the ask FIFO, and asks are served
// on it.
func TestAskFIFOMissingAtStart(t *testing.T) {
	roles := follow.NewRoles()
	var made atomic.Int32
	h := newHarness(t, func(c *Config) {
		require.NoError(t, os.Remove(filepath.Join(c.Dir.Path(), AskName)))
		c.Create, c.AskMode, c.Roles = true, 0o620, roles
		c.Created = func(d *sharedir.Dir, name string) {
			if name == AskName {
				made.Add(1)
			}
		}
	})
	// Told just after it was made, maybe after the first open.
	require.Eventually(t, func() bool { return made.Load() == 1 }, 10*time.Second, time.Millisecond,
		"made again once, and to be removed at exit")
	fi, err := os.Lstat(filepath.Join(h.dir, AskName))
	require.NoError(t, err)
	require.Equal(t, os.ModeNamedPipe|0o620, fi.Mode())
	_, ok := roles.Current(follow.RoleAsk)
	require.True(t, ok, "claimed as the ask fifo")
	h.ready()
	a := h.ask("a", "hello", nil)
	require.Equal(t, "hello\n", h.input())
	h.out("hi\n" + testPrompt)
	a.requireAnswer("hi\n")
}
