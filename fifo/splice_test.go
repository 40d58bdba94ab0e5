package fifo

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// pollablePipe is a pipe whose ends the runtime poller serves, as the agent
// makes them.
func pollablePipe(t testing.TB) (r, w *os.File) {
	var fds [2]int
	require.NoError(t, unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK))
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	Grow(r)
	return r, w
}

func TestSpliceMovesEverythingInOrder(t *testing.T) {
	checkLeaks(t)
	inR, inW := pollablePipe(t)
	outR, outW := pollablePipe(t)
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	go func() { inW.Write(data); inW.Close() }()
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(outR); got <- b }()
	for {
		_, err := Splice(inR, outW, PipeSize)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	outW.Close()
	require.True(t, bytes.Equal(data, <-got))
	inR.Close()
	outR.Close()
}

// BenchmarkStreamCopy compares the agent's splice pump with a plain
// read/write copy between two pipes, the way the bridge moved bytes before.
func BenchmarkStreamCopy(b *testing.B) {
	const chunk = 1 << 20
	for _, mode := range []string{"splice", "read-write"} {
		b.Run(mode, func(b *testing.B) {
			inR, inW := pollablePipe(b)
			outR, outW := pollablePipe(b)
			defer inR.Close()
			defer outR.Close()
			data := make([]byte, chunk)
			total := int64(b.N) * chunk
			go func() {
				for i := 0; i < b.N; i++ {
					inW.Write(data)
				}
				inW.Close()
			}()
			done := make(chan struct{})
			go func() { io.Copy(io.Discard, outR); close(done) }()
			b.SetBytes(chunk)
			b.ReportAllocs()
			b.ResetTimer()
			var moved int64
			buf := make([]byte, 64<<10)
			for moved < total {
				var n int
				var err error
				if mode == "splice" {
					n, err = Splice(inR, outW, PipeSize)
				} else {
					if n, err = inR.Read(buf); n > 0 {
						_, err = outW.Write(buf[:n])
					}
				}
				if err != nil {
					b.Fatal(err)
				}
				moved += int64(n)
			}
			outW.Close()
			<-done
		})
	}
}

func TestWakeSurvivesReopen(t *testing.T) {
	checkLeaks(t)
	p := newFIFO(t)
	src, err := OpenSource(p)
	require.NoError(t, err)
	defer src.Close()
	r, w := pollablePipe(t)
	defer r.Close()
	defer w.Close()
	done := make(chan error, 1)
	go func() { _, err := src.SpliceTo(w, PipeSize); done <- err }()
	time.Sleep(50 * time.Millisecond) // SpliceTo waits for bytes

	// A Wake, then the FIFO is replaced before SpliceTo looks again.
	require.NoError(t, os.Remove(p))
	_, err = Make(p, 0o600)
	require.NoError(t, err)
	src.Wake()
	_, _, err = src.Reopen(false, 0)
	require.NoError(t, err)
	select {
	case err := <-done:
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	case <-time.After(3 * time.Second):
		src.Close()
		<-done
		t.Fatal("SpliceTo slept through Wake because the FIFO was replaced")
	}
	src.Rearm()
}
