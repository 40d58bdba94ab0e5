//go:build linux

package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/sharedir"
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
	require.NoError(t, os.Remove(filepath.Join(dir, statusName)))
	require.Equal(t, "", k.of(d), "the status file gone")
}
