//go:build linux

package execmode

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/protocol"
)

// A cancel reaches every request with its id, queued or running; a
// request still queued when the agent stops gets "agent is stopping", and
// one never queued (waiting in the input FIFO) the same from the lines
// read at stop.
func TestExecCancelQueueAndStop(t *testing.T) {
	g := startEngine(t, `read x; echo "$x"; exec sleep 60`, func(cfg *Config) { cfg.MaxConcurrent = 1 })
	r := reader(t, g.out)
	g.write(`{"id":"dup","stdin":"first\n"}` + "\n")
	for f := frame(t, r); f.Type != protocol.FrameStdout; f = frame(t, r) {
		require.Equal(t, protocol.FrameStart, f.Type)
	}
	g.write(`{"id":"dup","stdin":"second\n"}` + "\n" + `{"cancel":"dup"}` + "\n")
	var queued, running protocol.Frame
	for running.Type == "" || queued.Type == "" {
		switch f := frame(t, r); f.Type {
		case protocol.FrameError:
			queued = f
		case protocol.FrameExit:
			running = f
		default:
			t.Fatalf("unexpected frame %+v", f)
		}
	}
	require.Equal(t, "canceled", queued.Error, "the queued request")
	require.True(t, running.Canceled, "the running request's exit frame: %+v", running)

	// One runs, one waits in the queue, one in the input FIFO.
	g.write("a\nb\nc\n")
	require.Equal(t, protocol.FrameStart, frame(t, r).Type)
	require.Equal(t, protocol.FrameStdout, frame(t, r).Type)
	g.stop()
	errs, exits := 0, 0
	for errs+exits < 3 {
		switch f := frame(t, r); f.Type {
		case protocol.FrameError:
			require.Equal(t, errStopping.Error(), f.Error)
			errs++
		case protocol.FrameExit:
			exits++
		}
	}
	require.Equal(t, 2, errs, "the requests that did not start")
	g.stopWithin(10 * time.Second)
}
