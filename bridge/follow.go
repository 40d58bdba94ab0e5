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
// closing an inotify descriptor takes the kernel tens of milliseconds, which
// every exit would pay. Each look wakes an idle agent, and a wake-up of the
// Go runtime costs a few hundred microseconds of CPU on a virtual machine:
// once a second keeps an idle agent under a millisecond of CPU a second,
// and a writer of a replaced FIFO waits at most that long for its reader.
const followInterval = time.Second

// remakeDelay is how long a FIFO may be missing before the agent (with
// Create) makes it again. Someone who removes a FIFO to replace it has this
// long to make theirs, so their mkfifo does not fail for ours.
const remakeDelay = time.Second

// reopener is a FIFO end that follows its path.
type reopener interface {
	Reopen(create bool, perm os.FileMode) (changed, created bool, err error)
}

// followed is one FIFO end and the entry it follows.
type followed struct {
	entry
	path string
	end  reopener
}

// follow keeps src and sink on the FIFOs their entries name until ctx is
// done (see followEnds).
func (a *agent) follow(ctx context.Context, src reopener, sink *fifo.Sink) {
	followEnds(ctx, a.cfg, []followed{
		{entry{a.inDir, filepath.Base(a.cfg.In)}, a.cfg.In, src},
		{entry{a.outDir, filepath.Base(a.cfg.Out)}, a.cfg.Out, sink},
	}, sink, a.addCreated)
}

// followEnds keeps each end on the FIFO its entry names until ctx is done:
// a replaced FIFO is served in place of the old one, and with Create a
// missing one is made again after remakeDelay (and given to created, to be
// removed at exit). Entries are looked at with fstatat relative to their
// directory's descriptor, never following a link, and remade with mkfifoat
// there (fifo.Dir.Make). sink, when one of the ends, gets the bytes left
// in a replaced FIFO moved at once.
func followEnds(ctx context.Context, cfg *Config, ends []followed, sink *fifo.Sink, created func(*fifo.Dir, string)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	reported := map[string]bool{} // paths whose wrong content was logged
	reopen := func(f followed, create bool) {
		changed, made, err := f.end.Reopen(create, cfg.Perm)
		switch {
		case err != nil && !errors.Is(err, fifo.ErrClosed):
			if !reported[f.path] {
				cfg.Log.Error("cannot serve what the fifo path now names; still serving the old fifo", "path", f.path, "err", err)
				reported[f.path] = true
			}
			return
		case changed:
			cfg.Log.Info("fifo replaced; serving the new one", "path", f.path, "created", made)
			if sink != nil && f.end == reopener(sink) {
				// Output waiting in the old FIFO moves now, not with the
				// child's next write; closing the sink ends the wait.
				wg.Add(1)
				go func() { defer wg.Done(); sink.CarryOver() }()
			}
		}
		reported[f.path] = false
		if made {
			created(f.dir, f.name)
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
		for _, f := range ends {
			_, err := f.dir.Stat(f.name)
			switch {
			case !errors.Is(err, os.ErrNotExist):
				delete(missing, f.path)
				reopen(f, false)
			case missing[f.path].IsZero():
				missing[f.path] = time.Now()
			case cfg.Create && time.Since(missing[f.path]) >= remakeDelay-followInterval/2:
				// Missing at two looks a followInterval apart: missing
				// for remakeDelay, give or take the ticker's jitter.
				reopen(f, true)
				delete(missing, f.path)
			}
		}
	}
}
