package bridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
)

// followInterval is how often the FIFO paths are looked at for a replaced
// or missing FIFO. Looking (two lstat calls) is cheaper than inotify here:
// a directory watch also reports every write into the FIFOs, which would
// wake the agent for each one, and closing an inotify descriptor takes
// the kernel tens of milliseconds, which every exit would pay.
const followInterval = 250 * time.Millisecond

// remakeDelay is how long a FIFO may be missing before the agent (with
// Create) makes it again. Someone who removes a FIFO to replace it has this
// long to make theirs, so their mkfifo does not fail for ours.
const remakeDelay = time.Second

// reopener is a FIFO end that follows its path.
type reopener interface {
	Reopen(create bool, perm os.FileMode) (changed, created bool, err error)
}

// follow keeps src and sink on the FIFOs their paths name until ctx is done:
// a replaced FIFO is served in place of the old one, and with Create a
// missing one is made again after remakeDelay.
func (a *agent) follow(ctx context.Context, src reopener, sink *fifo.Sink) {
	cfg := a.cfg
	ends := map[string]reopener{filepath.Clean(cfg.In): src, filepath.Clean(cfg.Out): sink}
	var wg sync.WaitGroup
	defer wg.Wait()
	reported := map[string]bool{} // paths whose wrong content was logged
	reopen := func(path string, create bool) {
		changed, made, err := ends[path].Reopen(create, cfg.Perm)
		switch {
		case err != nil && !errors.Is(err, fifo.ErrClosed):
			if !reported[path] {
				cfg.Log.Error("fifo path holds something else; still serving the old fifo", "path", path, "err", err)
				reported[path] = true
			}
			return
		case changed:
			cfg.Log.Info("fifo replaced; serving the new one", "path", path, "created", made)
			if ends[path] == reopener(sink) {
				// Output waiting in the old FIFO moves now, not with the
				// child's next write; closing the sink ends the wait.
				wg.Add(1)
				go func() { defer wg.Done(); sink.CarryOver() }()
			}
		}
		reported[path] = false
		if made {
			a.addCreated(path)
		}
	}

	t := time.NewTicker(followInterval)
	defer t.Stop()
	missing := map[string]time.Time{} // since when
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for path := range ends {
			_, err := os.Lstat(path)
			switch {
			case !errors.Is(err, os.ErrNotExist):
				delete(missing, path)
				reopen(path, false)
			case missing[path].IsZero():
				missing[path] = time.Now()
			case cfg.Create && time.Since(missing[path]) >= remakeDelay:
				reopen(path, true)
				delete(missing, path)
			}
		}
	}
}
