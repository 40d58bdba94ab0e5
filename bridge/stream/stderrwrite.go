//go:build linux

package stream

import (
	"io"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/fifobridge/fifobridge/protocol"
)

// stderrOut writes a stderr copy's bytes to the agent's stderr, which it
// never puts into non-blocking mode: that file description is shared
// with the agent's log and later children. Each piece, at most PIPE_BUF
// bytes, is written once poll(2) says there is room: a pipe then takes
// it whole at once. While the child runs a piece waits for room as long
// as it takes, as the child's own writes to the agent's stderr would
// (backpressure), looking every patience whether finish began; from
// then on it waits no later than finish's end (giveUpAt), and one that
// finds no room by then is dropped, and counted. write is for one
// goroutine; giveUpAt is safe from any.
type stderrOut struct {
	f        *os.File
	w        io.Writer // f, with SIGTTOU blocked when it is a terminal
	patience time.Duration
	end      atomic.Int64 // giveUpAt's time in Unix nanoseconds; 0 before
	dropped  atomic.Int64 // bytes given up
}

func newStderrOut(f *os.File, patience time.Duration) *stderrOut {
	return &stderrOut{f: f, w: tty.Output(f), patience: patience}
}

// giveUpAt makes every write from now on give up, at the latest, the
// patience from now, and returns that time. Called once.
func (o *stderrOut) giveUpAt() time.Time {
	end := time.Now().Add(o.patience)
	o.end.Store(end.UnixNano())
	return end
}

// write writes p, piece by piece, dropping a piece that found no room
// in time.
func (o *stderrOut) write(p []byte) {
	for len(p) > 0 {
		piece := p[:min(len(p), protocol.PipeBuf)]
		p = p[len(piece):]
		n := 0
		if o.room() {
			n, _ = o.w.Write(piece) // as the agent's log, it has nowhere to say it failed
		}
		o.dropped.Add(int64(len(piece) - max(n, 0)))
	}
}

// room waits until f has room for a piece, or an error a write would
// report, and reports whether it came before finish's end. It polls in
// slices of at most the patience, so that a finish that began during
// one is seen, at the latest, when its end comes: a slice begun before
// finish ends before it.
func (o *stderrOut) room() bool {
	rc, err := o.f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		for {
			slice, last := o.patience, false
			if end := o.end.Load(); end != 0 {
				slice, last = max(time.Until(time.Unix(0, end)), 0), true
			}
			n, err := unix.Poll(fds, int((slice+time.Millisecond-1)/time.Millisecond))
			switch {
			case err == unix.EINTR:
			case err != nil, n > 0:
				ok = err == nil
				return
			case last:
				return
			}
		}
	})
	return ok
}
