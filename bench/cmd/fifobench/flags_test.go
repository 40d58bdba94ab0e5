//go:build linux

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAskGaps checks -ask-gaps: the default measures back to back and
// 100 ms apart, a list is taken in order, and a spacing below 0, above a
// second, given twice or not a duration is refused.
func TestAskGaps(t *testing.T) {
	cfg, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, []time.Duration{0, 100 * time.Millisecond}, cfg.askGaps)
	cfg, err = parseFlags([]string{"-ask-gaps", "20ms, 0"})
	require.NoError(t, err)
	require.Equal(t, []time.Duration{20 * time.Millisecond, 0}, cfg.askGaps)
	for _, bad := range []string{"-1ms", "2s", "0,0", "x", ""} {
		_, err := parseFlags([]string{"-ask-gaps", bad})
		require.Error(t, err, bad)
	}
}
