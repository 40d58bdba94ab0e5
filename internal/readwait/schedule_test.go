//go:build linux

package readwait

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNextProbe: back to back for SpinFor, then doubling from 1 ms.
func TestNextProbe(t *testing.T) {
	require.Zero(t, NextProbe(0))
	require.Zero(t, NextProbe(SpinFor-1))
	require.Equal(t, FirstWait, NextProbe(SpinFor))
	require.Equal(t, 3*FirstWait, NextProbe(3*FirstWait))
}
