//go:build linux

package client

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// An Asker's memory of the serving agent follows the status file: a new
// one put in place (as a new agent's is) is read, an unchanged one is
// not, a missing one is no agent.
func TestAgentIdentity(t *testing.T) {
	dir := t.TempDir()
	put := func(body string) {
		tmp := filepath.Join(dir, "tmp")
		require.NoError(t, os.WriteFile(tmp, []byte(body), 0o600))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, statusName)))
	}
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	var k agentIdentity
	require.Equal(t, "", k.of(d), "no status file")
	put(`{"pid":7,"started_at":"2026-11-26T10:00:00Z"}`)
	first := k.of(d)
	require.Contains(t, first, "7@")
	require.Equal(t, first, k.of(d))
	put(`{"pid":8,"started_at":"2026-11-26T11:00:00Z"}`)
	require.Contains(t, k.of(d), "8@", "a new agent's status file")
	for _, size := range []int64{0, 3, 1 << 10} { // the file grew or shrank since the stat
		id, err := readIdentity(d, size)
		require.NoError(t, err)
		require.Contains(t, id, "8@")
	}
	require.NoError(t, os.Remove(filepath.Join(dir, statusName)))
	require.Equal(t, "", k.of(d), "the status file gone")
}

// A turn takes the agent of the turn before to serve DIR while that agent
// still holds the Asker's reply FIFO, without reading the status file;
// once it let go, the status file says.
func TestServingAgent(t *testing.T) {
	checkLeaks(t)
	dir := newConversationDir(t)
	put := func(pid int) {
		d, err := sharedir.Open(dir, false)
		require.NoError(t, err)
		defer d.Close()
		require.NoError(t, status.WriteAt(d, statusName, status.Status{PID: pid, Mode: "stream", State: "running", StartedAt: time.Now()}, 0o644))
	}
	put(1)
	c := startFakeConversation(t, dir)
	a := openAsker(t, dir, nil)
	s := startTurn(t, context.Background(), a, Turn{Input: []byte("1")})
	q := c.next()
	w := c.openReply(q)
	defer w.Close()
	_, err := w.Write(protocol.AppendEnd(protocol.AppendData(nil, q.ID, protocol.FrameAnswer, []byte("one\n")), q.ID, protocol.End{}))
	require.NoError(t, err)
	require.NoError(t, s.wait(t).err)

	put(2) // stands for the file a new agent would write, were the one that answered gone
	require.Contains(t, a.servingAgent(), "1@", "the agent that answered still holds the reply FIFO: the file is not read")
	w.Close()
	require.Contains(t, a.servingAgent(), "2@", "it let go: the file is read")
}
