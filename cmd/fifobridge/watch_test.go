//go:build linux

package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/client"
)

// TestWatchExit: a watch exits with the child's status, 0 for a close,
// 125 when refused or failed, 124 past -timeout; the usage names it.
func TestWatchExit(t *testing.T) {
	ctx := context.Background()
	require.Equal(t, 7, watchExit(ctx, client.Watched{Exited: true, Code: 7}, nil, 0))
	require.Equal(t, 137, watchExit(ctx, client.Watched{Exited: true, Code: 137, Signal: "KILL"}, nil, 0))
	require.Equal(t, 0, watchExit(ctx, client.Watched{Closed: true}, nil, 0))
	require.Equal(t, exitBridge, watchExit(ctx, client.Watched{}, &client.RejectedError{Msg: "watching is reading"}, 0))
	require.Equal(t, exitBridge, watchExit(ctx, client.Watched{}, fmt.Errorf("%w: gone", client.ErrAgentGone), 0))
	timedOut, cancel := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel()
	<-timedOut.Done()
	require.Equal(t, exitTimedOut, watchExit(timedOut, client.Watched{}, timedOut.Err(), time.Nanosecond))
	require.Contains(t, usage, "fifobridge watch ")
}
