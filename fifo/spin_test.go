package fifo

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// setWindow sets the busy-poll window for one test and restores it after.
func setWindow(t *testing.T, d time.Duration) {
	was := spinWindow.Load()
	spinWindow.Store(int64(d))
	t.Cleanup(func() { spinWindow.Store(was) })
}

func TestSpinAdapts(t *testing.T) {
	setWindow(t, spinMax)
	adapt(time.Second) // sparse traffic: the window shrinks...
	assert.Equal(t, int64(spinMax/2), spinWindow.Load())
	for range 10 {
		adapt(time.Second)
	}
	assert.Zero(t, spinWindow.Load(), "...until it is off")
	adapt(3 * spinMax) // neither soon nor late: no change
	assert.Zero(t, spinWindow.Load())
	adapt(time.Microsecond) // a wait that parked ended soon: it grows again
	assert.Equal(t, int64(spinMin), spinWindow.Load())
	for range 10 {
		adapt(time.Microsecond)
	}
	assert.Equal(t, int64(spinMax), spinWindow.Load(), "never beyond spinMax")
}

// What one poll saw of the other waits is passed on: a spinning wait is
// told, a sleeping one told and woken, and a parked one's readiness is
// left to the runtime's poller.
func TestSpinTells(t *testing.T) {
	for _, tc := range []struct {
		name           string
		state          int
		handed, poller bool
		seen, woken    bool
	}{
		{"spinning", spinning, true, false, true, false},
		{"sleeping", sleeping, true, false, true, true},
		{"parked", parked, false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := newPipe(t)
			_, err := other.w.Write([]byte("x"))
			require.NoError(t, err)
			x := &waiter{fd: int32(other.r.Fd()), events: unix.POLLIN, state: tc.state, wake: make(chan struct{}, 1)}
			listWait(x)
			defer unlistWait(x)
			mine := newPipe(t)
			me := &waiter{fd: int32(mine.r.Fd()), events: unix.POLLIN}
			var set spinSet
			require.True(t, set.fill(me))
			n, err := unix.Poll(set.fds[:set.n], 0)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			handed, poller := set.tell()
			assert.Equal(t, tc.handed, handed, "handed")
			assert.Equal(t, tc.poller, poller, "poller")
			assert.Equal(t, tc.seen, x.seen.Load(), "seen")
			assert.Equal(t, tc.woken, len(x.wake) == 1, "woken")
		})
	}
}

// A wait that lets the poller run sleeps until it is woken: with a window
// of an hour, this test ends only if the wake reaches it.
func TestSpinSleepIsWoken(t *testing.T) {
	me := &waiter{}
	listWait(me)
	defer unlistWait(me)
	done := sleepInBackground(me)
	waits.mu.Lock()
	wake := me.wake
	waits.mu.Unlock()
	wake <- struct{}{}
	<-done
	assert.Equal(t, spinning, me.state)
}

// A spinning wait that sees another spinning wait's descriptor ready tells
// it so, and goes on spinning for its own.
func TestSpinHandsOver(t *testing.T) {
	setWindow(t, time.Millisecond)
	mine := newPipe(t)
	other := newPipe(t)
	spinner := &waiter{fd: int32(other.r.Fd()), events: unix.POLLIN, state: spinning}
	listWait(spinner)
	defer unlistWait(spinner)
	_, err := other.w.Write([]byte("x"))
	require.NoError(t, err)
	me := &waiter{fd: int32(mine.r.Fd()), events: unix.POLLIN}
	listWait(me)
	defer unlistWait(me)
	assert.False(t, spin(me), "its own descriptor never became ready")
	assert.True(t, spinner.seen.Load(), "the other spinning wait was told")

	// Told, a spinning wait returns at once without a poll of its own.
	me.seen.Store(true)
	setWindow(t, time.Hour)
	assert.True(t, spin(me))
}

// A spinning wait sees its own descriptor become ready.
func TestSpinSeesOwnDescriptor(t *testing.T) {
	setWindow(t, time.Hour)
	mine := newPipe(t)
	_, err := mine.w.Write([]byte("x"))
	require.NoError(t, err)
	me := &waiter{fd: int32(mine.r.Fd()), events: unix.POLLIN}
	listWait(me)
	defer unlistWait(me)
	assert.True(t, spin(me))
}

// With more waits than spinWaiters, nobody spins.
func TestSpinOffWithManyWaits(t *testing.T) {
	setWindow(t, time.Hour)
	p := newPipe(t)
	for range spinWaiters {
		w := &waiter{fd: int32(p.r.Fd()), events: unix.POLLIN}
		listWait(w)
		defer unlistWait(w)
	}
	me := &waiter{fd: int32(p.r.Fd()), events: unix.POLLIN}
	listWait(me)
	defer unlistWait(me)
	assert.False(t, spin(me))
}

// SpinRead waits for bytes through the window and the parked wait alike.
func TestSpinRead(t *testing.T) {
	for _, window := range []time.Duration{0, spinMax} {
		setWindow(t, window)
		p := newPipe(t)
		go func() { p.w.Write([]byte("late")) }()
		buf := make([]byte, 8)
		n, err := SpinRead(p.r, buf)
		require.NoError(t, err)
		assert.Equal(t, "late", string(buf[:n]))
	}
}

type pipePair struct{ r, w *os.File }

// newPipe returns a pipe whose read end is non-blocking (in the runtime
// poller), closed when the test ends.
func newPipe(t *testing.T) pipePair {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	return pipePair{r, w}
}

// A wait finds bytes that were there before it began, although the
// runtime's poller has already reported them once (its readiness is reset
// at the start of every wait): with the window off, on, and with too many
// waits to spin. Each case fails by its deadline if the wait parks on them.
func TestWaitSeesBytesAlreadyThere(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window time.Duration
		crowd  int
	}{{"window off", 0, 0}, {"window on", spinMax, 0}, {"crowded", spinMax, spinWaiters + 1}} {
		t.Run(tc.name, func(t *testing.T) {
			setWindow(t, tc.window)
			idle := newPipe(t) // never readable
			for range tc.crowd {
				w := &waiter{fd: int32(idle.r.Fd()), events: unix.POLLIN}
				listWait(w)
				defer unlistWait(w)
			}
			p := newPipe(t)
			require.NoError(t, p.r.SetReadDeadline(time.Now().Add(10*time.Second)))
			first := make(chan error, 1)
			go func() { first <- waitReadable(p.r) }() // parks, or spins, until the byte comes
			_, err := p.w.Write([]byte("x"))
			require.NoError(t, err)
			require.NoError(t, <-first)
			require.NoError(t, waitReadable(p.r), "the byte is still there")
		})
	}
}

// sleepInBackground starts w's sleep of an hour and returns once w is
// sleeping; the channel is closed when the sleep ends.
func sleepInBackground(w *waiter) <-chan struct{} {
	done := make(chan struct{})
	go func() { defer close(done); sleep(w, time.Hour) }()
	for {
		waits.mu.Lock()
		st := w.state
		waits.mu.Unlock()
		if st == sleeping {
			return done
		}
		runtime.Gosched()
	}
}

// A sleeping wait is woken when another wait ends or stops spinning: it
// slept for that one, and sleeping on would only wait for its timer.
func TestSleepersWokenWhenAWaitEnds(t *testing.T) {
	for _, end := range []string{"unlisted", "parked"} {
		t.Run(end, func(t *testing.T) {
			other := &waiter{state: spinning}
			listWait(other)
			me := &waiter{}
			listWait(me)
			defer unlistWait(me)
			done := sleepInBackground(me)
			if end == "unlisted" {
				unlistWait(other)
			} else {
				setState(other, parked)
				defer unlistWait(other)
			}
			<-done
		})
	}
}
