//go:build linux

package fifo

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func newFIFO(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	created, err := Make(p, 0o600)
	require.NoError(t, err)
	require.True(t, created)
	return p
}

func TestMake(t *testing.T) {
	dir := t.TempDir()
	t.Run("creates with the requested mode despite the umask", func(t *testing.T) {
		old := unix.Umask(0o077)
		defer unix.Umask(old)
		p := filepath.Join(dir, "a")
		created, err := Make(p, 0o666)
		require.NoError(t, err)
		require.True(t, created)
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		require.Equal(t, os.ModeNamedPipe|0o666, fi.Mode())
		created, err = Make(p, 0o666)
		require.NoError(t, err)
		require.False(t, created, "an existing FIFO is reused")
	})
	t.Run("refuses and keeps a regular file", func(t *testing.T) {
		p := filepath.Join(dir, "file")
		require.NoError(t, os.WriteFile(p, []byte("keep me"), 0o644))
		_, err := Make(p, 0o660)
		require.ErrorIs(t, err, ErrNotFIFO)
		require.Contains(t, err.Error(), "regular file")
		b, _ := os.ReadFile(p)
		require.Equal(t, "keep me", string(b))
	})
	t.Run("a symlink to a FIFO is not a FIFO", func(t *testing.T) {
		target := filepath.Join(dir, "a")
		link := filepath.Join(dir, "link")
		require.NoError(t, os.Symlink(target, link))
		require.ErrorIs(t, Check(link), ErrNotFIFO)
		_, err := OpenWriterNow(link)
		require.ErrorIs(t, err, ErrNotFIFO)
	})
}

func TestOpenWriterNow(t *testing.T) {
	p := newFIFO(t)
	checkLeaks(t)
	_, err := OpenWriterNow(p)
	require.ErrorIs(t, err, ErrNoReader)
	r, err := OpenReaderNow(p)
	require.NoError(t, err)
	defer r.Close()
	w, err := OpenWriterNow(p)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

func TestSourceNeverEOF(t *testing.T) {
	p := newFIFO(t)
	checkLeaks(t)
	src, err := OpenSource(p)
	require.NoError(t, err)

	var want bytes.Buffer
	for i := 0; i < 100; i++ {
		w, err := OpenWriterNow(p)
		require.NoError(t, err, "the Source is a reader, so writers never wait")
		line := []byte{byte('a' + i%26), '\n'}
		want.Write(line)
		_, err = w.Write(line)
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}
	got := make([]byte, want.Len())
	_, err = io.ReadFull(src, got)
	require.NoError(t, err)
	require.Equal(t, want.Bytes(), got)

	// Every writer has left: Read must wait, not return EOF.
	res := make(chan error, 1)
	go func() {
		_, err := src.Read(make([]byte, 10))
		res <- err
	}()
	select {
	case err := <-res:
		t.Fatalf("Read returned %v with no writer; want it to wait", err)
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, src.Close())
	require.ErrorIs(t, <-res, ErrClosed)
}

func TestSinkBackpressureAndReconnect(t *testing.T) {
	p := newFIFO(t)
	checkLeaks(t)
	sink, err := OpenSink(p)
	require.NoError(t, err)
	defer sink.Close()

	data := make([]byte, 4<<20) // far more than a pipe buffer
	rand.Read(data)
	wrote := make(chan error, 1)
	go func() {
		_, err := sink.Write(data)
		wrote <- err
	}()
	select {
	case err := <-wrote:
		t.Fatalf("Write returned %v with no reader; want it to wait", err)
	case <-time.After(100 * time.Millisecond):
	}

	// Readers come and go; together they must see every byte once.
	var got bytes.Buffer
	for got.Len() < len(data) {
		r, err := OpenReaderNow(p)
		require.NoError(t, err)
		_, err = io.CopyN(&got, r, min(int64(300_000), int64(len(data)-got.Len())))
		require.NoError(t, err)
		require.NoError(t, r.Close())
	}
	require.NoError(t, <-wrote)
	require.True(t, bytes.Equal(data, got.Bytes()), "bytes lost or repeated across reconnects")
}

func TestFollowReplacement(t *testing.T) {
	t.Run("source", func(t *testing.T) {
		p := newFIFO(t)
		checkLeaks(t)
		src, err := OpenSource(p)
		require.NoError(t, err)
		defer src.Close()
		writeTo(t, p, "old ")
		require.NoError(t, os.Remove(p))
		_, err = Make(p, 0o600)
		require.NoError(t, err)
		changed, created, err := src.Reopen(false, 0, nil)
		require.NoError(t, err)
		require.True(t, changed)
		require.False(t, created)
		writeTo(t, p, "new")
		got := make([]byte, 7)
		_, err = io.ReadFull(src, got)
		require.NoError(t, err)
		require.Equal(t, "old new", string(got))
	})
	t.Run("sink carries unread bytes over", func(t *testing.T) {
		p := newFIFO(t)
		checkLeaks(t)
		sink, err := OpenSink(p)
		require.NoError(t, err)
		defer sink.Close()
		_, err = sink.Write([]byte("old "))
		require.NoError(t, err)
		require.NoError(t, os.Remove(p))
		changed, created, err := sink.Reopen(true, 0o600, nil)
		require.NoError(t, err)
		require.True(t, changed)
		require.True(t, created, "a missing FIFO is made again")
		_, err = sink.Write([]byte("new"))
		require.NoError(t, err)
		r, err := OpenReaderNow(p)
		require.NoError(t, err)
		defer r.Close()
		got := make([]byte, 7)
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, "old new", string(got))
	})
	t.Run("a FIFO accept refuses is not served", func(t *testing.T) {
		p := newFIFO(t)
		checkLeaks(t)
		src, err := OpenSource(p)
		require.NoError(t, err)
		defer src.Close()
		was, err := src.Describe()
		require.NoError(t, err)
		require.NoError(t, os.Rename(p, p+".old"))
		_, err = Make(p, 0o600)
		require.NoError(t, err)
		refused := errors.New("refused")
		var seen Info
		changed, _, err := src.Reopen(false, 0, func(i Info) error { seen = i; return refused })
		require.ErrorIs(t, err, refused)
		require.False(t, changed)
		var now unix.Stat_t
		require.NoError(t, unix.Stat(p, &now))
		require.Equal(t, now.Ino, seen.Ino, "accept sees the FIFO that would be served")
		require.False(t, seen.Same(was.ID))
		i, err := src.Describe()
		require.NoError(t, err)
		require.True(t, i.Same(was.ID), "the old FIFO stays in use")
		writeTo(t, p+".old", "old")
		got := make([]byte, 3)
		_, err = io.ReadFull(src, got)
		require.NoError(t, err)
		require.Equal(t, "old", string(got))
	})
	t.Run("a regular file in its place is refused", func(t *testing.T) {
		p := newFIFO(t)
		checkLeaks(t)
		src, err := OpenSource(p)
		require.NoError(t, err)
		defer src.Close()
		require.NoError(t, os.Remove(p))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
		_, _, err = src.Reopen(true, 0o600, nil)
		require.ErrorIs(t, err, ErrNotFIFO)
		b, _ := os.ReadFile(p)
		require.Equal(t, "x", string(b))
	})
}

func writeTo(t *testing.T, p, s string) {
	t.Helper()
	w, err := OpenWriterNow(p)
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Write([]byte(s))
	require.NoError(t, err)
}

func TestWait(t *testing.T) {
	t.Run("returns when the FIFO appears, even in a new directory", func(t *testing.T) {
		checkLeaks(t)
		p := filepath.Join(t.TempDir(), "later", "in")
		done := make(chan error, 1)
		go func() { done <- Wait(context.Background(), p) }()
		waitParked(t, "select", "fifo.nextChange") // watching the parent
		require.NoError(t, os.Mkdir(filepath.Dir(p), 0o755))
		_, err := Make(p, 0o600)
		require.NoError(t, err)
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("Wait did not see the FIFO")
		}
	})
	t.Run("cancel", func(t *testing.T) {
		checkLeaks(t)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := Wait(ctx, filepath.Join(t.TempDir(), "never"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("something else there", func(t *testing.T) {
		checkLeaks(t)
		p := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(p, nil, 0o644))
		require.ErrorIs(t, Wait(context.Background(), p), ErrNotFIFO)
	})
}

func TestDrain(t *testing.T) {
	checkLeaks(t)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.Empty(t, Drain(r), "an empty pipe drains to nothing, without waiting")
	w.Write([]byte("left over"))
	require.Equal(t, "left over", string(Drain(r)))

	// More than one read's worth, all of it.
	_, err = unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	require.NoError(t, err)
	big := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16)
	n, err := w.Write(big)
	require.NoError(t, err)
	require.Equal(t, len(big), n)
	require.Equal(t, big, Drain(r))
	require.Empty(t, Drain(r))

	// DrainAtMost stops at its limit and leaves the rest.
	_, err = w.Write(big)
	require.NoError(t, err)
	require.Equal(t, big[:100<<10+7], DrainAtMost(r, 100<<10+7))
	require.Equal(t, big[100<<10+7:], Drain(r))
}

func TestReplacedTwice(t *testing.T) {
	replace := func(t *testing.T, p string) {
		t.Helper()
		tmp := p + ".new"
		_, err := Make(tmp, 0o600)
		require.NoError(t, err)
		require.NoError(t, os.Rename(tmp, p))
	}
	t.Run("source reads every replaced FIFO in order", func(t *testing.T) {
		p := newFIFO(t)
		checkLeaks(t)
		src, err := OpenSource(p)
		require.NoError(t, err)
		defer src.Close()
		for _, s := range []string{"A", "B", "C"} {
			writeTo(t, p, s)
			if s != "C" {
				replace(t, p)
				_, _, err := src.Reopen(false, 0, nil)
				require.NoError(t, err)
			}
		}
		got := make([]byte, 3)
		_, err = io.ReadFull(src, got)
		require.NoError(t, err)
		require.Equal(t, "ABC", string(got))
	})
	t.Run("sink carries every replaced FIFO over in order", func(t *testing.T) {
		p := newFIFO(t)
		checkLeaks(t)
		sink, err := OpenSink(p)
		require.NoError(t, err)
		defer sink.Close()
		for _, s := range []string{"A", "B"} {
			_, err := sink.Write([]byte(s))
			require.NoError(t, err)
			replace(t, p)
			_, _, err = sink.Reopen(false, 0, nil)
			require.NoError(t, err)
		}
		require.NoError(t, sink.CarryOver(), "bytes move without waiting for the next Write")
		r, err := OpenReaderNow(p)
		require.NoError(t, err)
		defer r.Close()
		got := make([]byte, 2)
		_, err = io.ReadFull(r, got)
		require.NoError(t, err)
		require.Equal(t, "AB", string(got))
	})
}

// TestSourceWaitReadable: WaitReadable returns once bytes are there,
// those of a replaced FIFO too, without taking them; a Read after it
// returns them; with none it waits until Close, and then says ErrClosed.
func TestSourceWaitReadable(t *testing.T) {
	p := newFIFO(t)
	checkLeaks(t)
	src, err := OpenSource(p)
	require.NoError(t, err)
	waited := make(chan error, 1)
	go func() { waited <- src.WaitReadable() }()
	select {
	case err := <-waited:
		t.Fatalf("WaitReadable returned %v with no bytes; want it to wait", err)
	case <-time.After(100 * time.Millisecond):
	}
	writeTo(t, p, "A")
	require.NoError(t, <-waited)
	tmp := p + ".new"
	_, err = Make(tmp, 0o600)
	require.NoError(t, err)
	require.NoError(t, os.Rename(tmp, p))
	_, _, err = src.Reopen(false, 0, nil)
	require.NoError(t, err)
	require.NoError(t, src.WaitReadable(), "the byte of the replaced FIFO")
	got := make([]byte, 2)
	n, err := src.Read(got)
	require.NoError(t, err)
	require.Equal(t, "A", string(got[:n]))

	go func() { waited <- src.WaitReadable() }()
	select {
	case err := <-waited:
		t.Fatalf("WaitReadable returned %v with no bytes; want it to wait", err)
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, src.Close())
	require.ErrorIs(t, <-waited, ErrClosed)
}
