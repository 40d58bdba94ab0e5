//go:build linux

package pipeio

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpliceMovesEverythingInOrder(t *testing.T) {
	checkLeaks(t)
	in, out := newPipe(t), newPipe(t)
	Grow(in.r)
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	wrote := make(chan struct{})
	go func() { in.w.Write(data); in.w.Close(); close(wrote) }()
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(out.r); got <- b }()
	for {
		_, err := Splice(in.r, out.w, PipeSize)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	out.w.Close()
	require.True(t, bytes.Equal(data, <-got))
	<-wrote
}

// SpliceNow says why nothing moved: an empty source, a full destination,
// or a source with no writer left (neither).
func TestSpliceNowSaysWhy(t *testing.T) {
	checkLeaks(t)
	src, dst := newPipe(t), newPipe(t)
	n, empty, full, err := SpliceNow(src.r, dst.w, PipeSize)
	require.NoError(t, err)
	assert.Equal(t, []any{0, true, false}, []any{n, empty, full}, "empty source")

	_, err = src.w.Write([]byte("x"))
	require.NoError(t, err)
	fill(t, dst.w)
	n, empty, full, err = SpliceNow(src.r, dst.w, PipeSize)
	require.NoError(t, err)
	assert.Equal(t, []any{0, false, true}, []any{n, empty, full}, "full destination")

	_, err = dst.r.Read(make([]byte, PipeSize))
	require.NoError(t, err)
	n, _, _, err = SpliceNow(src.r, dst.w, PipeSize)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	require.NoError(t, src.w.Close())
	n, empty, full, err = SpliceNow(src.r, dst.w, PipeSize)
	require.NoError(t, err)
	assert.Equal(t, []any{0, false, false}, []any{n, empty, full}, "no writer left")
	_, err = Splice(src.r, dst.w, PipeSize)
	assert.ErrorIs(t, err, io.EOF)
}

// Splice waits for room in a full destination, then moves the bytes.
func TestSpliceWaitsForRoom(t *testing.T) {
	checkLeaks(t)
	setWindow(t, spinMax)
	src, dst := newPipe(t), newPipe(t)
	_, err := src.w.Write([]byte("x"))
	require.NoError(t, err)
	fill(t, dst.w)
	done := make(chan error, 1)
	go func() {
		n, err := Splice(src.r, dst.w, PipeSize)
		if err == nil && n != 1 {
			err = io.ErrShortWrite
		}
		done <- err
	}()
	_, err = dst.r.Read(make([]byte, PipeSize))
	require.NoError(t, err)
	require.NoError(t, <-done)
}

// BenchmarkStreamCopy compares the agent's splice pump with a plain
// read/write copy between two pipes.
func BenchmarkStreamCopy(b *testing.B) {
	const chunk = 1 << 20
	for _, mode := range []string{"splice", "read-write"} {
		b.Run(mode, func(b *testing.B) {
			in, out := newPipe(b), newPipe(b)
			Grow(in.r)
			Grow(out.r)
			data := make([]byte, chunk)
			total := int64(b.N) * chunk
			go func() {
				for range b.N {
					in.w.Write(data)
				}
			}()
			done := make(chan struct{})
			go func() { io.CopyN(io.Discard, out.r, total); close(done) }()
			b.SetBytes(chunk)
			b.ResetTimer()
			var moved int64
			buf := make([]byte, 64<<10)
			for moved < total {
				var n int
				var err error
				if mode == "splice" {
					n, err = Splice(in.r, out.w, PipeSize)
				} else if n, err = in.r.Read(buf); n > 0 {
					_, err = out.w.Write(buf[:n])
				}
				if err != nil {
					b.Fatal(err)
				}
				moved += int64(n)
			}
			<-done
		})
	}
}
