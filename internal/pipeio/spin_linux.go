package pipeio

import (
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The waits of this package first poll their own descriptor for a short
// window without sleeping, and only then park in the runtime's poller.
//
// Why: a round trip through the agent crosses four pipes. Parking after
// each hop puts the agent's CPU to sleep, and waking it again (an
// inter-processor interrupt on a virtual machine, the runtime's poller, a
// hand-off between threads) can cost more than the hop itself. While lines
// come and go back to back, the next event is a few microseconds away:
// polling for it with a zero timeout, and yielding the CPU between polls so
// that the child and the writer can run on the same CPU, finds it without
// any of that.
//
// The window adapts. When a window passes without an event and the parked
// wait that follows is long, the next window is half as long, down to off;
// when a parked wait ends soon after its window, the next is twice as long,
// up to spinMax. Sparse traffic therefore soon costs nothing but the parked
// wait.

// busyPollEnv names the variable whose value 0 turns the busy-poll off; it
// is read once, at start.
const busyPollEnv = "FIFOBRIDGE_BUSY_POLL"

const (
	spinMax = 50 * time.Microsecond
	spinMin = 2 * time.Microsecond // below this the window is off
)

var (
	// window is the current window in nanoseconds; 0 is off.
	window atomic.Int64
	// spinners counts the waits spinning now.
	spinners atomic.Int32
)

// busyPoll is whether the busy-poll was left on at start. While it is,
// adapt may wind the window down to 0 and back up; while it is not, the
// window stays 0.
var busyPoll = os.Getenv(busyPollEnv) != "0"

func init() {
	if busyPoll {
		window.Store(int64(spinMax))
	}
}

// maxSpinners is how many waits may spin at once: a stream's two
// directions, so that each catches its own bytes; any more park at once.
// With one P, none: a spinning wait keeps its P and yields it only to
// runnable goroutines, so the runtime's poller, which wakes the parked
// waits, would not run until the window ends, holding up every other wait
// by that much.
func maxSpinners() int32 {
	if runtime.GOMAXPROCS(0) < 2 {
		return 0
	}
	return 2
}

// spin polls the descriptor fd and returns true as soon as it has one of
// events, false when the window passed (or is off, or enough other waits
// are spinning). The window is the current one, or longer while armed
// (nil for none: see ReadSpinner) holds a later end, read again at every
// poll so that an end set meanwhile counts. fd must stay open meanwhile:
// callers spin inside a RawConn callback, which holds it.
func spin(fd uintptr, events int16, armed *atomic.Int64) bool {
	start := sinceEpoch()
	end := func() time.Duration {
		e := start + time.Duration(window.Load())
		if armed != nil {
			e = max(e, time.Duration(armed.Load()))
		}
		return e
	}
	if end() <= start {
		return false
	}
	if spinners.Add(1) > maxSpinners() {
		spinners.Add(-1)
		return false
	}
	defer spinners.Add(-1)
	for {
		if ready(fd, events) {
			return true
		}
		if sinceEpoch() >= end() {
			return false
		}
		unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) // the child or the writer may need this CPU
		runtime.Gosched()                           // another goroutine of the agent may
	}
}

// epoch is when the package was loaded; sinceEpoch, the time since then,
// is read from the monotonic clock.
var epoch = time.Now()

func sinceEpoch() time.Duration { return time.Since(epoch) }

// adapt tunes the window after a wait that parked for parked: a short
// park says a longer window would have caught the event, a long one that
// the window was spent for nothing.
func adapt(parked time.Duration) {
	if !busyPoll {
		return
	}
	w := time.Duration(window.Load())
	switch {
	case parked < 2*spinMax: // the event came soon: a longer window would have caught it
		w = min(max(2*w, spinMin), spinMax)
	case parked > 8*spinMax:
		if w /= 2; w < spinMin {
			w = 0
		}
	default:
		return
	}
	window.Store(int64(w))
}

// poll is poll(2); tests watch what it is asked.
var poll = unix.Poll

// ready reports whether fd has one of events, or an error that a read or
// write would report, without waiting. It polls fd and no other
// descriptor.
func ready(fd uintptr, events int16) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: events}}
	for {
		n, err := poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n > 0
	}
}
