//go:build linux && (386 || amd64)

package readwait

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestX86Tables: the written-out table of the agent's own x86 ABI is
// golang.org/x/sys's; the other is checked where it is the agent's (the
// 386 run of .ci/crossbuild).
func TestX86Tables(t *testing.T) {
	_, native, err := nativeABI()
	require.NoError(t, err)
	own := &x8664
	if runtime.GOARCH == "386" {
		own = &i386
	}
	require.ElementsMatch(t, native.calls, own.calls)
	require.Equal(t, native.long, own.long)
}
