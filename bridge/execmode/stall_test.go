//go:build linux

package execmode

import (
	"bufio"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/protocol"
)

// floodScript floods its stdout, for good, when its request says "flood";
// otherwise it echoes its request.
const floodScript = `read what; if [ "$what" = flood ]; then
	while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done
fi; echo "$what"`

// Issue 26, hole 4: requests whose reply FIFO is held open but never read,
// and whose child writes more than the pipes hold, do not keep their
// slots for good: with nothing taken for the patience, each is given up
// (its tree stopped as by a cancel), and the request behind them is
// served, with no time limit set anywhere.
func TestExecStalledReplyGivenUpWhileRunning(t *testing.T) {
	g := startEngine(t, floodScript, func(c *Config) { c.MaxConcurrent = 2 })
	for _, name := range []string{"stall0", "stall1"} {
		g.stalledReply(name)
		g.write(`{"id":"` + name + `","reply":"` + name + `","stdin":"flood\n"}` + "\n")
	}
	require.Eventually(t, func() bool { return g.e.active.Load() == 2 }, 10*time.Second, 5*time.Millisecond)
	vic := g.replyFIFO("honest")
	begin := time.Now()
	g.write(`{"id":"honest","reply":"honest","stdin":"hello\n"}` + "\n")
	vic.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(vic)
	for {
		f := frame(t, r)
		if f.Type == protocol.FrameExit {
			require.Zero(t, *f.Code)
			break
		}
	}
	took := time.Since(begin)
	t.Logf("served after %v", took)
	require.Less(t, took, g.e.rule.Patience()+g.e.cfg.StopTimeout+2*time.Second)
	require.Eventually(t, func() bool { return g.e.completed.Load() == 3 && g.e.active.Load() == 0 }, 10*time.Second, 5*time.Millisecond)
	// A request counts as completed once its tree is gone, before its
	// frames' writer is closed: wait for that too.
	require.Eventually(t, func() bool { return g.e.rule.Watching() == 0 }, 10*time.Second, 5*time.Millisecond, "every reply writer closed")
}

// The same with the output FIFO: requests without a reply FIFO whose
// frames nobody takes from the output FIFO are given up after the
// patience while their child runs, and do not hold their slots.
func TestExecUnreadOutputGivenUpWhileRunning(t *testing.T) {
	g := startEngine(t, floodScript, func(c *Config) { c.MaxConcurrent = 2 })
	fill(t, g.out)
	g.write(`{"id":"f0","stdin":"flood\n"}` + "\n" + `{"id":"f1","stdin":"flood\n"}` + "\n")
	require.Eventually(t, func() bool { return g.e.active.Load() == 2 }, 10*time.Second, 5*time.Millisecond)
	vic := g.replyFIFO("honest")
	begin := time.Now()
	g.write(`{"id":"honest","reply":"honest","stdin":"hello\n"}` + "\n")
	vic.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(vic)
	for frame(t, r).Type != protocol.FrameExit {
	}
	took := time.Since(begin)
	t.Logf("served after %v", took)
	require.Less(t, took, g.e.rule.Patience()+g.e.cfg.StopTimeout+2*time.Second)
	require.Eventually(t, func() bool { return g.e.active.Load() == 0 }, 10*time.Second, 5*time.Millisecond)
	g.stopWithin(g.e.cfg.StopTimeout + bound.StopGrace + time.Second)
}

// A reader of the output FIFO that takes a little at a time, slower than
// the child writes, is waited for (backpressure), however long the
// request takes: nothing is given up.
func TestExecSlowOutputReaderIsWaitedFor(t *testing.T) {
	g := startEngine(t, `head -c 300000 /dev/zero | tr '\0' x`, nil)
	f, err := openReaderNow(g.out)
	require.NoError(t, err)
	defer f.Close()
	f.SetReadDeadline(time.Now().Add(30 * time.Second))
	g.write(`{"id":"slow"}` + "\n")
	// 8 KiB every 40 ms: about 1.5 s in all, more than the patience
	// (1 s), with something taken all along.
	r := bufio.NewReader(&slowReader{f: f})
	begin := time.Now()
	got := 0
	for {
		fr := frame(t, r)
		got += len(fr.Bytes())
		if fr.Type == protocol.FrameExit {
			require.Zero(t, *fr.Code)
			require.False(t, fr.Canceled)
			break
		}
	}
	require.Equal(t, 300_000, got)
	require.Greater(t, time.Since(begin), g.e.rule.Patience())
}

// slowReader reads at most 8 KiB at a time, 40 ms after the last read.
type slowReader struct{ f *os.File }

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(40 * time.Millisecond) // a slow reader is what the test is about
	return s.f.Read(p[:min(len(p), 8<<10)])
}
