//go:build linux

package pipeio

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitParked waits until a wait of s has parked (or is about to).
func waitParked(t *testing.T, s *ReadSpinner) {
	t.Helper()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.parked
	}, 10*time.Second, 100*time.Microsecond, "the wait never parked")
}

// expectSetup is a spinner of a new pipe whose reads wait parked at once
// (the window is off), with the busy-poll on and two Ps.
func expectSetup(t *testing.T) (pipe, *ReadSpinner) {
	checkLeaks(t)
	setProcs(t, 2)
	setWindow(t, 0)
	was := busyPoll
	busyPoll = true
	t.Cleanup(func() { busyPoll = was })
	p := newPipe(t)
	return p, NewReadSpinner(p.r)
}

// A parked wait is woken by Expect and spins: it polls its descriptor
// again, with no byte there, and it finds the byte that comes; the read
// that follows sees no deadline of Expect's.
func TestExpectWakesParkedWait(t *testing.T) {
	p, s := expectSetup(t)
	seen := make(chan int32, 1024)
	watchPolls(t, seen)
	done := make(chan error, 1)
	go func() { done <- s.WaitReadable() }()
	waitParked(t, s)
	for len(seen) > 0 {
		<-seen
	}
	s.Expect()
	select {
	case fd := <-seen: // spinning: nothing else polls
		require.Equal(t, int32(p.r.Fd()), fd)
	case err := <-done:
		t.Fatalf("the wait ended, with no byte there: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Expect did not wake the parked wait")
	}
	_, err := p.w.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, <-done)
	n, err := p.r.Read(make([]byte, 4))
	require.NoError(t, err, "Expect's deadline was left on the file")
	assert.Equal(t, 1, n)
}

// Without a byte, the spin after an Expect ends: the wait parks again.
func TestExpectSpinIsBounded(t *testing.T) {
	p, s := expectSetup(t)
	done := make(chan error, 1)
	go func() { done <- s.WaitReadable() }()
	waitParked(t, s)
	s.Expect()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return !s.poked && s.parked
	}, 10*time.Second, 100*time.Microsecond, "the wait spins on")
	assert.Zero(t, spinners.Load(), "a wait spins still")
	_, err := p.w.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, <-done)
}

// The owner's deadline wins over Expect's: set while a wait is woken by
// Expect, it ends the wait; set before, Expect leaves the wait be.
func TestExpectKeepsOwnersDeadline(t *testing.T) {
	_, s := expectSetup(t)
	done := make(chan error, 1)
	go func() { done <- s.WaitReadable() }()
	waitParked(t, s)
	s.mu.Lock() // the wait cannot take Expect's deadline back meanwhile
	s.poked = true
	require.NoError(t, s.f.SetReadDeadline(time.Unix(1, 0)))
	s.deadline = time.Unix(1, 0)
	s.mu.Unlock()
	require.ErrorIs(t, <-done, os.ErrDeadlineExceeded)

	s.Expect()
	s.mu.Lock()
	assert.False(t, s.poked, "Expect poked a wait the owner's deadline ends")
	s.mu.Unlock()
	require.ErrorIs(t, s.WaitReadable(), os.ErrDeadlineExceeded)
	require.NoError(t, s.SetReadDeadline(time.Time{}))
}

// With the busy-poll off, or one P, Expect does nothing: the parked wait
// stays parked until its byte comes.
func TestExpectOff(t *testing.T) {
	for _, tc := range []struct {
		name  string
		procs int
		on    bool
	}{{"FIFOBRIDGE_BUSY_POLL=0", 2, false}, {"one P", 1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, s := expectSetup(t)
			busyPoll = tc.on
			setProcs(t, tc.procs)
			done := make(chan error, 1)
			go func() { done <- s.WaitReadable() }()
			waitParked(t, s)
			s.Expect()
			s.mu.Lock()
			assert.False(t, s.poked, "Expect woke the wait")
			s.mu.Unlock()
			assert.Zero(t, s.armed.Load(), "Expect armed a spin")
			_, err := p.w.Write([]byte("x"))
			require.NoError(t, err)
			require.NoError(t, <-done)
		})
	}
}

// BenchmarkAnswer times a question written to python3 -i and its answer
// read back up to the next prompt by a reader that waits through a
// ReadSpinner, as a conversation's copy of its child's output does, with
// the window off (as it is once traffic is sparse): "parked" never calls
// Expect, "expect" calls it after each question, as a conversation's turn
// does. Each question waits askerGap after the last answer, untimed, as
// the agent's end of a turn and the asker's next question take it: long
// enough for the runtime to have put the copy's thread to sleep.
func BenchmarkAnswer(b *testing.B) {
	python, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("no python3")
	}
	for _, mode := range []string{"parked", "expect"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "expect" && (!busyPoll || runtime.GOMAXPROCS(0) < 2) {
				b.Skip("the busy-poll is off, or the runtime has one P")
			}
			was := window.Load()
			window.Store(0)
			b.Cleanup(func() { window.Store(was) })
			stdin, stdout, child := startAnswerer(b, python, "-i", "-q")
			s := NewReadSpinner(stdout)
			answers := make(chan error)
			go func() { // the copy: one answer is everything up to a prompt
				defer close(answers)
				var got []byte
				buf := make([]byte, 256)
				for {
					s.WaitReadable()
					n, err := stdout.Read(buf)
					if got = append(got, buf[:max(n, 0)]...); bytes.HasSuffix(got, []byte(">>> ")) {
						got = got[:0]
						answers <- nil
					}
					if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
						return
					}
				}
			}()
			require.NoError(b, <-answers) // the first prompt
			q := []byte("print(1)\n")
			for b.Loop() {
				b.StopTimer()
				time.Sleep(askerGap)
				b.StartTimer()
				if _, err := stdin.Write(q); err != nil {
					b.Fatal(err)
				}
				if mode == "expect" {
					s.Expect()
				}
				if err := <-answers; err != nil {
					b.Fatal(err)
				}
			}
			stdin.Close() // python3 ends, and the copy reads EOF
			for range answers {
			}
			require.NoError(b, child.Wait())
			stdout.Close()
		})
	}
}

// askerGap is BenchmarkAnswer's time between an answer and the next
// question.
const askerGap = 200 * time.Microsecond

// startAnswerer starts argv on pipes made as the agent makes a child's,
// its stderr on its stdout; it returns the agent's ends.
func startAnswerer(b *testing.B, argv ...string) (stdin, stdout *os.File, child *exec.Cmd) {
	stdin, childIn, err := Pipe(false)
	require.NoError(b, err)
	stdout, childOut, err := Pipe(true)
	require.NoError(b, err)
	child = exec.Command(argv[0], argv[1:]...)
	child.Stdin, child.Stdout, child.Stderr = childIn, childOut, childOut
	require.NoError(b, child.Start())
	childIn.Close()
	childOut.Close()
	return stdin, stdout, child
}
