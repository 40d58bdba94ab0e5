//go:build linux

package stream

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/fifobridge/fifobridge/sharedir"
)

// TestWinsizeWatch: a size written into DIR/winsize resizes the terminals,
// written in place or renamed there, also once DIR was moved (the watch
// is through its descriptor), and the watch's goroutines are gone once it
// is stopped; it holds no descriptor of its own (the agent's one inotify
// instance is made before counting, by leakcheck.FDs).
func TestWinsizeWatch(t *testing.T) {
	before, goroutines := leakcheck.FDs(t), runtime.NumGoroutine()
	path := filepath.Join(t.TempDir(), "dir")
	require.NoError(t, os.Mkdir(path, 0o755))
	dir, err := sharedir.Open(path, false)
	require.NoError(t, err)
	poked := make(chan struct{}, 1)
	poke := func() {
		select {
		case poked <- struct{}{}:
		default:
		}
	}
	term := newTerminal(&Config{Log: slog.New(slog.DiscardHandler)}, nil, nil, poke, nil)
	w := term.watchWinsize(dir)

	// Written until seen: the first write may come before the watch.
	resizedTo := func(where, size string, want tty.Winsize) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for term.winsize() != want {
			require.True(t, time.Now().Before(deadline), "no resize to %s after writing %s", size, where)
			require.NoError(t, os.WriteFile(filepath.Join(where, winsizeName), []byte(size+"\n"), 0o644))
			select {
			case <-poked:
			case <-time.After(time.Second):
			}
		}
	}
	resizedTo(path, "120x40", tty.Winsize{Cols: 120, Rows: 40})
	moved := path + ".moved"
	require.NoError(t, os.Rename(path, moved))
	resizedTo(moved, "100x30", tty.Winsize{Cols: 100, Rows: 30})
	// Replaced by a rename: the new file is read, and watched in turn.
	renamed := func(size string, want tty.Winsize) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for term.winsize() != want {
			require.True(t, time.Now().Before(deadline), "no resize to %s after renaming a file there", size)
			tmp := filepath.Join(moved, "tmp")
			require.NoError(t, os.WriteFile(tmp, []byte(size+"\n"), 0o644))
			require.NoError(t, os.Rename(tmp, filepath.Join(moved, winsizeName)))
			select {
			case <-poked:
			case <-time.After(time.Second):
			}
		}
	}
	renamed("90x20", tty.Winsize{Cols: 90, Rows: 20})
	resizedTo(moved, "80x25", tty.Winsize{Cols: 80, Rows: 25})

	w.Stop()
	require.NoError(t, dir.Close())
	require.Equal(t, before, leakcheck.FDs(t), "descriptors left open")
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "goroutines left")
}
