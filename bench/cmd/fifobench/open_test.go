//go:build linux

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func newFIFO(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, unix.Mkfifo(p, 0o600))
	return p
}

func TestOpenCancel(t *testing.T) {
	for name, open := range map[string]func(context.Context, string) (*os.File, error){
		"reader": openReader, "writer": openWriter,
	} {
		t.Run(name, func(t *testing.T) {
			p := newFIFO(t)
			before := leakcheck.FDs(t)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			f, err := open(ctx, p)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Nil(t, f)
			require.Equal(t, before, leakcheck.FDs(t), "descriptors left open")
		})
	}
	t.Run("already cancelled", func(t *testing.T) {
		p := newFIFO(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := openReader(ctx, p)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestOpenPair(t *testing.T) {
	p := newFIFO(t)
	before := leakcheck.FDs(t)
	got := make(chan []byte)
	go func() {
		r, err := openReader(context.Background(), p)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(r) // EOF once the writer closed
		r.Close()
		got <- b
	}()
	w, err := openWriter(context.Background(), p)
	require.NoError(t, err)
	_, err = w.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, "hello", string(<-got))
	require.Equal(t, before, leakcheck.FDs(t), "descriptors left open")
}
