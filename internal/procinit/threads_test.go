//go:build linux

package procinit

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReserveThreads: the runtime holds the reserved threads afterwards.
func TestReserveThreads(t *testing.T) {
	reserveThreads(24)
	n := 0
	entries, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	n = len(entries)
	require.GreaterOrEqual(t, n, 24, "threads after reserving 24")
}
