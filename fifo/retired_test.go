//go:build linux

package fifo

import (
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
)

// TestReplacedFIFOsBounded: whoever may rename the entries of DIR can
// replace the input FIFO again and again while the agent reads nothing
// (its queue of requests is full, its child reads no input), each time
// with a FIFO it keeps a byte in. The Source keeps each replaced FIFO
// open until it is emptied; at most maxRetired of them at once: past
// that, Reopen serves no new FIFO (the old one stays in use) until the
// Source read them, so the agent's descriptors do not grow with every
// replacement.
func TestReplacedFIFOsBounded(t *testing.T) {
	p := newFIFO(t)
	checkLeaks(t)
	src, err := OpenSource(p)
	require.NoError(t, err)
	defer src.Close()
	before := leakcheck.FDs(t)
	writeTo(t, p, "a")
	refused := 0
	const replacements = 3 * maxRetired
	for i := range replacements {
		require.NoError(t, os.Rename(p, p+"."+strconv.Itoa(i)))
		_, err := Make(p, 0o600)
		require.NoError(t, err)
		if _, _, err := src.Reopen(false, 0, nil); err != nil {
			refused++
			continue
		}
		writeTo(t, p, "b") // served: a byte it keeps once replaced
	}
	require.LessOrEqual(t, leakcheck.FDs(t)-before, maxRetired, "descriptors held for replaced FIFOs")
	require.Equal(t, replacements-maxRetired, refused, "replacements past the bound are refused")

	// Reading empties the replaced FIFOs; then the newest is served.
	got := make([]byte, maxRetired+1)
	_, err = io.ReadFull(src, got)
	require.NoError(t, err)
	_, _, err = src.Reopen(false, 0, nil)
	require.NoError(t, err)
	writeTo(t, p, "x")
	x := make([]byte, 1)
	_, err = io.ReadFull(src, x)
	require.NoError(t, err)
	require.Equal(t, "x", string(x), "the FIFO the path names now is served")
}
