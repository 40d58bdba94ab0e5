//go:build linux

package procfs

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDescriptors: the count is what a listing of /proc/self/fd shows,
// less the descriptor of the listing, and it follows what is opened.
func TestDescriptors(t *testing.T) {
	listed := func() int {
		names, err := DirNames("/proc/self/fd")
		require.NoError(t, err)
		return len(names) - 1
	}
	require.Equal(t, listed(), Descriptors())
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	require.Equal(t, listed(), Descriptors())
	n := Descriptors()
	f.Close()
	require.Equal(t, n-1, Descriptors())
}
