package fifo

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The waits of this package first poll for a short window without sleeping,
// and only then park in the runtime poller.
//
// Why: a round trip through the agent crosses four pipes. Parking after
// each hop puts the agent's CPU to sleep, and on a virtual machine waking it
// again (an inter-processor interrupt, the runtime's poller, a futex hand-off
// between threads) costs more than the hop itself. While lines come and go
// back to back, the next event is a few microseconds away: polling for it
// with a zero timeout, yielding the CPU between polls so that the child and
// the writer can run on the same CPU, finds it without any of that.
//
// The window adapts. A wait starts after bytes moved (or at the start), so
// an agent that sees no traffic spins once, for one window, and then
// sleeps in the poller until bytes come. When a window passes without an
// event and the wait that follows is long, the next window is half as long;
// when a wait that parked ends soon after the window, the next is twice as
// long, up to spinMax. Sparse traffic therefore soon costs nothing but the
// parked wait it had before.
//
// Every wait of the process is listed while it lasts, parked or spinning,
// and a spinning wait polls the descriptors of all of them in one poll(2):
// another spinning wait whose descriptor is ready is told so; when a parked
// wait's descriptor is ready, the spinner sleeps on a channel, so that the
// runtime's poller runs and wakes the other wait rather than let it stand
// behind the window, and the other wakes the sleeper once it has run.

const (
	spinMax     = 50 * time.Microsecond
	spinMin     = 2 * time.Microsecond // below this the window is off
	spinWaiters = 8                    // more waits than this: nobody spins
)

// spinWindow is the current window in nanoseconds; 0 is off.
var spinWindow atomic.Int64

func init() { spinWindow.Store(int64(spinMax)) }

// A wait's state, as other waits see it.
const (
	parked   = iota // in the runtime poller: only the poller wakes it
	spinning        // polling; it looks at seen on every round
	sleeping        // spinning, but letting the poller run: wake it by wake
)

// waiter is one wait under way: a descriptor, the events it waits for, its
// state, and whether another wait saw its descriptor ready.
type waiter struct {
	fd     int32
	events int16
	state  int // under waits.mu
	seen   atomic.Bool
	wake   chan struct{} // made by its first sleep, under waits.mu; one slot
}

var waits struct {
	mu   sync.Mutex
	list []*waiter
}

func listWait(w *waiter) {
	waits.mu.Lock()
	waits.list = append(waits.list, w)
	waits.mu.Unlock()
}

func unlistWait(w *waiter) {
	waits.mu.Lock()
	defer waits.mu.Unlock()
	for i, x := range waits.list {
		if x == w {
			waits.list = append(waits.list[:i], waits.list[i+1:]...)
			break
		}
	}
	wakeSleepers()
}

// setState sets w's state; a wait that stops spinning, like one that ends,
// wakes the sleeping waits, which may have been waiting for it.
func setState(w *waiter, state int) {
	waits.mu.Lock()
	defer waits.mu.Unlock()
	w.state = state
	if state == parked {
		wakeSleepers()
	}
}

// wakeSleepers wakes every sleeping wait. A wait sleeps so that the
// runtime's poller can wake a parked one; once that one has run (it ends,
// or spins and so watches the sleepers' descriptors), or once no wait is
// spinning any more, sleeping on could only wait for the timer, which the
// runtime rounds up to a millisecond. Call with waits.mu held.
func wakeSleepers() {
	for _, x := range waits.list {
		if x.state == sleeping {
			select {
			case x.wake <- struct{}{}:
			default:
			}
		}
	}
}

// spinSet is what one poll of a spinning wait looks at: its own descriptor
// first, then those of the other waits, with their states as they were.
type spinSet struct {
	fds    [spinWaiters + 1]unix.PollFd
	others [spinWaiters + 1]*waiter
	states [spinWaiters + 1]int
	wakes  [spinWaiters + 1]chan struct{}
	n      int
}

// fill sets s up for w, and tells whether spinning is allowed now.
func (s *spinSet) fill(w *waiter) bool {
	waits.mu.Lock()
	defer waits.mu.Unlock()
	if len(waits.list) > spinWaiters {
		return false
	}
	s.fds[0] = unix.PollFd{Fd: w.fd, Events: w.events}
	s.n = 1
	for _, x := range waits.list {
		if x == w {
			continue
		}
		s.fds[s.n] = unix.PollFd{Fd: x.fd, Events: x.events}
		s.others[s.n], s.states[s.n], s.wakes[s.n] = x, x.state, x.wake
		s.n++
	}
	return true
}

// tell passes on what one poll saw of the other waits: a spinning or
// sleeping wait whose descriptor is ready is told so (and a sleeping one
// woken); handed says whether any was, poller whether a parked one's
// descriptor is ready, which only the runtime's poller can act on.
func (s *spinSet) tell() (handed, poller bool) {
	for i := 1; i < s.n; i++ {
		if s.fds[i].Revents == 0 {
			continue
		}
		x := s.others[i]
		switch s.states[i] {
		case parked:
			poller = true
			continue
		case sleeping:
			x.seen.Store(true)
			select {
			case s.wakes[i] <- struct{}{}:
			default:
			}
		default:
			x.seen.Store(true)
		}
		handed = true
	}
	return handed, poller
}

// spin polls, for up to the window, w's descriptor and those of the other
// waits in one poll(2), and returns true when w's descriptor is ready,
// false when the window passed. A spinning wait whose descriptor is ready
// is told so and given the CPU, which spares it a poll of its own. When a
// parked wait's descriptor is ready, only the runtime's poller can wake
// it, and the poller runs only when no goroutine is runnable: w sleeps,
// still counted as spinning, until a wait that sees its descriptor ready
// wakes it, or the window passes. The descriptor must stay open meanwhile:
// callers spin inside RawConn callbacks. A descriptor of another wait that
// was closed since it was listed can at worst cost a spurious round.
func spin(w *waiter) bool {
	window := time.Duration(spinWindow.Load())
	if window == 0 {
		return false
	}
	var set spinSet
	start := time.Now()
	setState(w, spinning)
	defer setState(w, parked)
	for {
		if w.seen.Swap(false) {
			return true
		}
		if !set.fill(w) {
			return false
		}
		handed, poller := false, false
		if n, err := unix.Poll(set.fds[:set.n], 0); err == nil && n > 0 {
			if set.fds[0].Revents != 0 {
				return true
			}
			handed, poller = set.tell()
		}
		left := window - time.Since(start)
		switch {
		case left <= 0:
			return false
		case poller:
			sleep(w, left)
		case handed:
			runtime.Gosched()
		default:
			unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) // the child may need this CPU
			runtime.Gosched()                           // another wait may be spinning
		}
	}
}

// sleep blocks w until another wait wakes it or d passes, so that the
// runtime's poller runs meanwhile.
func sleep(w *waiter, d time.Duration) {
	waits.mu.Lock()
	if w.wake == nil {
		w.wake = make(chan struct{}, 1)
	}
	w.state = sleeping
	waits.mu.Unlock()
	t := time.NewTimer(d)
	select {
	case <-w.wake:
	case <-t.C:
	}
	t.Stop()
	setState(w, spinning)
}

// adapt tunes the window after a wait that parked for parked.
func adapt(parked time.Duration) {
	w := time.Duration(spinWindow.Load())
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
	spinWindow.Store(int64(w))
}

// ready reports whether fd has events, or an error that a read or write
// would report, without waiting.
func ready(fd uintptr, events int16) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: events}}
	n, err := unix.Poll(fds, 0)
	return err != nil || n > 0
}

// waitFor waits until f has events: first by polling, for the window, and
// then in the runtime poller, through RawConn, which first resets the
// poller's readiness for f and then calls back: the callback asks poll(2)
// whether f is ready already, so that readiness that came before the reset
// is not lost, and what comes after it wakes the wait. f's deadlines apply
// to the parked wait; a deadline in the past is noticed at the latest when
// the window ends.
func waitFor(f *os.File, events int16) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var w *waiter // listed from the first callback on, with f's descriptor
	var parkedAt time.Time
	check := func(fd uintptr) bool {
		if w != nil {
			return ready(fd, events)
		}
		w = &waiter{fd: int32(fd), events: events}
		listWait(w)
		// The poller's readiness was reset before this call: whatever
		// the spin did, bytes that came before must be looked for now,
		// or the park would miss them.
		if spin(w) || ready(fd, events) {
			return true
		}
		parkedAt = time.Now()
		return false
	}
	if events == unix.POLLOUT {
		err = rc.Write(check)
	} else {
		err = rc.Read(check)
	}
	if w != nil {
		unlistWait(w)
	}
	if !parkedAt.IsZero() {
		adapt(time.Since(parkedAt))
	}
	return err
}

// SpinRead is f.Read for a non-blocking f (a pipe, a FIFO, a terminal's
// master) that waits for bytes as this package's splices do: polling for
// the busy-poll window first, then parked.
func SpinRead(f *os.File, p []byte) (int, error) {
	waitReadable(f) // its error, if any, is f.Read's too
	return f.Read(p)
}
