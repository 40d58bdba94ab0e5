//go:build linux

package pipeio

import (
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestSpinAdapts(t *testing.T) {
	setWindow(t, spinMax)
	adapt(time.Second) // sparse traffic: the window shrinks...
	assert.Equal(t, int64(spinMax/2), window.Load())
	for range 10 {
		adapt(time.Second)
	}
	assert.Zero(t, window.Load(), "...until it is off")
	adapt(3 * spinMax) // neither soon nor late: no change
	assert.Zero(t, window.Load())
	adapt(time.Microsecond) // a wait that parked ended soon: it grows again
	assert.Equal(t, int64(spinMin), window.Load())
	for range 10 {
		adapt(time.Microsecond)
	}
	assert.Equal(t, int64(spinMax), window.Load(), "never beyond spinMax")
}

// Turned off at start, the busy-poll stays off whatever the traffic.
func TestAdaptLeavesItOff(t *testing.T) {
	setWindow(t, 0)
	was := busyPoll
	busyPoll = false
	t.Cleanup(func() { busyPoll = was })
	for range 10 {
		adapt(time.Microsecond)
	}
	assert.Zero(t, window.Load())
}

// FIFOBRIDGE_BUSY_POLL=0 turns it off at start; unset, it is on. Each case
// is a test binary of its own, which reads the variable as the agent does.
func TestBusyPollEnv(t *testing.T) {
	if v, ok := os.LookupEnv("PIPEIO_TEST_EXPECT"); ok {
		assert.Equal(t, v == "on", busyPoll)
		assert.Equal(t, v == "on", window.Load() != 0)
		return
	}
	for _, tc := range []struct{ env, want string }{{"0", "off"}, {"", "on"}, {"1", "on"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBusyPollEnv$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PIPEIO_TEST_EXPECT="+tc.want, busyPollEnv+"="+tc.env)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s=%q: want the busy-poll %s\n%s", busyPollEnv, tc.env, tc.want, out)
	}
}

func TestSpinSeesOwnDescriptor(t *testing.T) {
	checkLeaks(t)
	setProcs(t, 2)
	setWindow(t, time.Hour)
	p := newPipe(t)
	_, err := p.w.Write([]byte("x"))
	require.NoError(t, err)
	assert.True(t, spin(p.r.Fd(), unix.POLLIN, nil))
}

func TestSpinGivesUpAfterWindow(t *testing.T) {
	checkLeaks(t)
	setProcs(t, 2)
	setWindow(t, time.Millisecond)
	p := newPipe(t) // never readable
	assert.False(t, spin(p.r.Fd(), unix.POLLIN, nil))
	assert.Zero(t, spinners.Load())
}

// With two waits spinning, another does not spin: it would have seen its
// byte at once. With one P, none spins.
func TestSpinnersCapped(t *testing.T) {
	for _, tc := range []struct{ procs, spinning int32 }{{1, 0}, {2, 2}, {4, 2}} {
		checkLeaks(t)
		setProcs(t, int(tc.procs))
		setWindow(t, time.Hour)
		spinners.Store(tc.spinning)
		p := newPipe(t)
		_, err := p.w.Write([]byte("x"))
		require.NoError(t, err)
		assert.False(t, spin(p.r.Fd(), unix.POLLIN, nil), "GOMAXPROCS %d, %d spinning", tc.procs, tc.spinning)
		assert.Equal(t, tc.spinning, spinners.Load())
		spinners.Store(0)
		if tc.procs > 1 {
			assert.True(t, spin(p.r.Fd(), unix.POLLIN, nil), "GOMAXPROCS %d, none spinning", tc.procs)
		}
	}
}

// watchPolls makes poll record the descriptors of every call, and returns
// what was recorded so far; seen is told every descriptor polled.
func watchPolls(t *testing.T, seen chan<- int32) func() [][]int32 {
	var mu sync.Mutex
	var calls [][]int32
	poll = func(fds []unix.PollFd, timeout int) (int, error) {
		var these []int32
		for _, f := range fds {
			these = append(these, f.Fd)
			select {
			case seen <- f.Fd:
			default:
			}
		}
		mu.Lock()
		calls = append(calls, these)
		mu.Unlock()
		return unix.Poll(fds, timeout)
	}
	t.Cleanup(func() { poll = unix.Poll })
	return func() [][]int32 {
		mu.Lock()
		defer mu.Unlock()
		return calls
	}
}

// A wait polls its own descriptor and no other, also while another wait
// is under way on another pipe: the other's descriptor is not its to look
// at (it may be closed, and its number reused, at any moment).
func TestWaitPollsOnlyItsOwnDescriptor(t *testing.T) {
	checkLeaks(t)
	setProcs(t, 2) // both waits may spin
	setWindow(t, spinMax)
	mine, other := newPipe(t), newPipe(t)
	seen := make(chan int32, 64)
	calls := watchPolls(t, seen)

	done := make(chan error, 1)
	go func() { done <- WaitReadable(other.r) }()
	for fd := range seen { // the other wait is under way once it polls
		if fd == int32(other.r.Fd()) {
			break
		}
	}
	_, err := mine.w.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, WaitReadable(mine.r))
	_, err = other.w.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, <-done)

	own := map[int32]bool{int32(mine.r.Fd()): true, int32(other.r.Fd()): true}
	for _, c := range calls() {
		require.Len(t, c, 1, "a poll of several descriptors: %v", c)
		require.True(t, own[c[0]], "a poll of descriptor %d, no wait's own", c[0])
	}
}

// A wait finds bytes that were there before it began, although the
// runtime's poller has already reported them once (its readiness is reset
// at the start of every wait): with the window off, on, and with enough
// waits spinning that it may not. Each case fails by its deadline if the
// wait parks on them.
func TestWaitSeesBytesAlreadyThere(t *testing.T) {
	for _, tc := range []struct {
		name     string
		window   time.Duration
		spinning int32
	}{{"window off", 0, 0}, {"window on", spinMax, 0}, {"crowded", spinMax, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			setProcs(t, 2)
			setWindow(t, tc.window)
			spinners.Store(tc.spinning)
			t.Cleanup(func() { spinners.Store(0) })
			p := newPipe(t)
			require.NoError(t, p.r.SetReadDeadline(time.Now().Add(10*time.Second)))
			first := make(chan error, 1)
			go func() { first <- WaitReadable(p.r) }() // parks, or spins, until the byte comes
			_, err := p.w.Write([]byte("x"))
			require.NoError(t, err)
			require.NoError(t, <-first)
			require.NoError(t, WaitReadable(p.r), "the byte is still there")
		})
	}
}

// A deadline in the past ends a wait, spinning or not.
func TestWaitHonoursDeadline(t *testing.T) {
	for _, w := range []time.Duration{0, spinMax} {
		checkLeaks(t)
		setWindow(t, w)
		p := newPipe(t)
		require.NoError(t, p.r.SetReadDeadline(time.Unix(1, 0)))
		require.ErrorIs(t, WaitReadable(p.r), os.ErrDeadlineExceeded, "window %v", w)
	}
}

// A full pipe is waited for until a reader makes room.
func TestWaitWritable(t *testing.T) {
	checkLeaks(t)
	setWindow(t, spinMax)
	p := newPipe(t)
	fill(t, p.w)
	done := make(chan error, 1)
	go func() { done <- WaitWritable(p.w) }()
	_, err := p.r.Read(make([]byte, PipeSize))
	require.NoError(t, err)
	require.NoError(t, <-done)
}

// Read waits for bytes through the window and the parked wait alike.
func TestRead(t *testing.T) {
	for _, w := range []time.Duration{0, spinMax} {
		checkLeaks(t)
		setWindow(t, w)
		p := newPipe(t)
		go p.w.Write([]byte("late"))
		buf := make([]byte, 8)
		n, err := Read(p.r, buf)
		require.NoError(t, err)
		assert.Equal(t, "late", string(buf[:n]), "window %v", w)
	}
}

// fill writes into the non-blocking w until its pipe is full.
func fill(t *testing.T, w *os.File) {
	t.Helper()
	rc, err := w.SyscallConn()
	require.NoError(t, err)
	chunk := make([]byte, 64<<10)
	require.NoError(t, rc.Control(func(fd uintptr) {
		for {
			if _, err := unix.Write(int(fd), chunk); err != nil {
				require.ErrorIs(t, err, unix.EAGAIN)
				return
			}
		}
	}))
}
