//go:build linux

package fifo

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/stretchr/testify/require"
)

// missedAfter bounds a Wait that should find its FIFO at once: only a
// lost wake-up takes this long.
const missedAfter = 10 * time.Second

// TestWaitChangeBeforeWatch: what changes between the entering of the
// directory Wait is to watch and its watch (the hook beforeWatch runs
// there, once) raises no event, and is still seen: Wait looks again once
// the watch is in place. The FIFO is made in the window too, so nothing
// later wakes a Wait that missed it.
func TestWaitChangeBeforeWatch(t *testing.T) {
	cases := []struct {
		name   string
		fifo   string // below the test's directory; dir/in when empty
		setup  func(t *testing.T, base string)
		change func(t *testing.T, base string)
		want   error
	}{
		{
			name: "directory made",
			change: func(t *testing.T, base string) {
				require.NoError(t, os.Mkdir(filepath.Join(base, "dir"), 0o755))
				makeFIFO(t, filepath.Join(base, "dir", "in"))
			},
		},
		{
			name: "two directories made",
			fifo: "dir/sub/in",
			change: func(t *testing.T, base string) {
				require.NoError(t, os.MkdirAll(filepath.Join(base, "dir", "sub"), 0o755))
				makeFIFO(t, filepath.Join(base, "dir", "sub", "in"))
			},
		},
		{
			name: "directory replaced",
			setup: func(t *testing.T, base string) {
				require.NoError(t, os.Mkdir(filepath.Join(base, "dir"), 0o755))
			},
			change: func(t *testing.T, base string) {
				dir := filepath.Join(base, "dir")
				require.NoError(t, os.Rename(dir, dir+".old"))
				require.NoError(t, os.Mkdir(dir, 0o755))
				makeFIFO(t, filepath.Join(dir, "in"))
			},
		},
		{
			name: "link made",
			setup: func(t *testing.T, base string) {
				require.NoError(t, os.Chmod(base, 0o777))
			},
			change: func(t *testing.T, base string) {
				require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(base, "dir")))
			},
			want: sharedir.ErrSymlink,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkLeaks(t)
			base := t.TempDir()
			if c.setup != nil {
				c.setup(t, base)
			}
			p := filepath.Join(base, "dir", "in")
			if c.fifo != "" {
				p = filepath.Join(base, c.fifo)
			}
			changed := false
			beforeWatch = func(string) {
				if !changed {
					changed = true
					c.change(t, base)
				}
			}
			t.Cleanup(func() { beforeWatch = nil })
			ctx, cancel := context.WithTimeout(context.Background(), missedAfter)
			defer cancel()
			err := Wait(ctx, p)
			require.True(t, changed)
			require.NotErrorIs(t, err, context.DeadlineExceeded, "Wait missed the change")
			if c.want != nil {
				require.ErrorIs(t, err, c.want)
				return
			}
			require.NoError(t, err)
		})
	}
}

// TestWaitDirectoryRace: 1,000 times (200 with -short), Wait starts while
// the directory of its FIFO and the FIFO are made, and finds the FIFO
// every time. Before the fix its first run missed it.
func TestWaitDirectoryRace(t *testing.T) {
	checkLeaks(t)
	base := t.TempDir()
	runs := 1000
	if testing.Short() {
		runs = 200
	}
	for i := range runs {
		dir := filepath.Join(base, strconv.Itoa(i))
		done := make(chan error, 1)
		ctx, cancel := context.WithTimeout(context.Background(), missedAfter)
		go func() { done <- Wait(ctx, filepath.Join(dir, "in")) }()
		require.NoError(t, os.Mkdir(dir, 0o755))
		makeFIFO(t, filepath.Join(dir, "in"))
		err := <-done
		cancel()
		require.NoError(t, err, "run %d of %d", i+1, runs)
	}
}

func makeFIFO(t *testing.T, p string) {
	t.Helper()
	_, err := Make(p, 0o600)
	require.NoError(t, err)
}
