//go:build linux

package status

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFileMode: whoever -perm lets use the FIFOs may read the status file
// and the lock; the agent's user may write them.
func TestFileMode(t *testing.T) {
	for perm, want := range map[os.FileMode]os.FileMode{
		0o660: 0o640, 0o666: 0o644, 0o600: 0o600, 0o620: 0o640, 0o606: 0o604, 0o622: 0o644, 0o700: 0o600,
	} {
		require.Equal(t, want, FileMode(perm), "-perm %04o", perm)
	}
}
