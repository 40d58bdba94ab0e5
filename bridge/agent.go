//go:build linux

package bridge

import (
	"context"
	"fmt"
	"github.com/fifobridge/fifobridge/bridge/config"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/internal/procfs"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
)

// ConfigError is a failure of the agent itself before any child ran: a FIFO
// path that holds something else, a directory that cannot be made.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Run is `fifobridge run`: it prepares the FIFOs, serves them in cfg.Mode
// until the work is over or ctx is done (a stop request), and cleans up. It
// returns the exit status of the last child, or an error: a
// *child.StartError when the program cannot start, a *ConfigError when the
// agent cannot work at all.
func Run(ctx context.Context, cfg *config.Run) (child.ExitStatus, error) {
	a := &agent{cfg: cfg, started: time.Now().UTC(), state: child.StateStarting, dirs: map[string]*sharedir.Dir{}, roles: follow.NewRoles()}
	reaper := child.NewReaper(cfg.Log)
	defer reaper.Close()

	statusFile := status.NewWriter(cfg.StatusPath, status.FileMode(cfg.Perm), a.snapshot)
	a.statusFile = statusFile
	statusCtx, stopStatus := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); statusFile.Run(statusCtx) }()
	prepared := false
	defer func() {
		stopStatus()
		wg.Wait()
		a.setState(child.StateStopped)
		// An agent that could not even prepare its directory reports that
		// alone, not also the status file it could not write there.
		if err := statusFile.Write(); err != nil && prepared {
			cfg.Log.Warn("cannot write the status file", "err", err)
		}
		// Every goroutine that uses the directories is gone: close them,
		// and the lock with them, last.
		statusFile.Detach()
		a.closeDirs()
	}()

	// No child exists yet to forward signals to: drop them, rather than
	// deliver them late to a child that never asked.
	stopDropping := a.dropSignals()
	err := a.prepare(ctx)
	stopDropping()
	defer a.removeCreated()
	prepared = err == nil
	statusFile.Poke() // the directory may be new: write the file there now
	if err != nil {
		if ctx.Err() != nil {
			cfg.Log.Info("stopped while waiting for the fifos")
			return child.ExitStatus{}, nil
		}
		return child.ExitStatus{}, &ConfigError{err}
	}
	a.warnChildAccess()
	a.warnInputReaders()
	cgroups, err := openContainment(cfg)
	if err != nil {
		return child.ExitStatus{}, err
	}
	a.setContainment(cgroups != nil)
	if cgroups != nil {
		defer cgroups.Close() // after every child was stopped: removes what is left
	}
	if pids := limitPids(cfg, reaper); pids != nil {
		defer pids.Close() // after every child was stopped, before the reaper's
	}
	src, sink, err := a.openEnds()
	if err != nil {
		return child.ExitStatus{}, &ConfigError{err}
	}

	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	wg.Add(1)
	go func() { defer wg.Done(); a.followFIFOs(watchCtx, src, sink) }()

	cfg.Log.Info("serving", "mode", cfg.Mode, "in", cfg.In, "out", cfg.Out, "program", cfg.Program,
		"containment", a.snapshotContainment(), "cgroup", cgroupDir(cgroups))
	a.warnPromptUnseen()
	m := a.engine(cgroups, reaper, src, sink)
	a.setSource(m.Snapshot)
	return m.Run(ctx)
}

// openEnds opens the input and output FIFOs as the agent's Source and
// Sink, records them as what they serve (follow.Roles: one FIFO cannot
// be both), and has the status file name the input: a client checks
// that it writes into that very FIFO. On failure nothing stays open.
func (a *agent) openEnds() (*fifo.Source, *fifo.Sink, error) {
	src, err := fifo.OpenSourceAt(a.inDir, filepath.Base(a.cfg.In))
	if err != nil {
		return nil, nil, err
	}
	if err := a.roles.Serve(follow.RoleIn, src); err != nil {
		src.Close()
		return nil, nil, fmt.Errorf("serve fifo %s: %w", a.cfg.In, err)
	}
	sink, err := fifo.OpenSinkAt(a.outDir, filepath.Base(a.cfg.Out))
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	if err := a.roles.Serve(follow.RoleOut, sink); err != nil {
		src.Close()
		sink.Close()
		return nil, nil, fmt.Errorf("serve fifo %s: %w", a.cfg.Out, err)
	}
	a.openControl()
	a.statusFile.Poke()
	return src, sink, nil
}

// dropSignals discards forwarded signals until the returned func is called.
func (a *agent) dropSignals() (stop func()) {
	done := make(chan struct{})
	dropped := make(chan struct{})
	go func() {
		defer close(dropped)
		for {
			select {
			case <-done:
				return
			case sig := <-a.cfg.Forward:
				a.cfg.Log.Info("signal not forwarded: no child yet", "signal", sig.String())
			}
		}
	}()
	return func() { close(done); <-dropped }
}

// agent holds what the status file reports across modes.
type agent struct {
	cfg         *config.Run
	started     time.Time
	containment string // containCgroup or containTree; "" until known

	mu      sync.Mutex
	state   child.State
	source  func() status.Status // the mode's own part of the status, once serving
	created []made
	// control is stream mode's control FIFO, DIR/control, once opened
	// (openControl), or nil; the table serves it and closes it.
	control *fifo.Source

	// roles is what each FIFO end serves; the status file names the
	// input FIFOs from it.
	roles *follow.Roles

	// Set up by prepare, closed by closeDirs once nothing uses them.
	statusFile     *status.Writer
	statusAttached bool
	dirs           map[string]*sharedir.Dir // every directory opened, by path
	dir            *sharedir.Dir            // DIR, nil when it does not exist (-create=false)
	inDir, outDir  *sharedir.Dir            // the directories of -in and -out
	replies        *sharedir.Dir            // DIR/replies (exec mode), or nil
	sessions       *sharedir.Dir            // DIR/sessions (sessions mode), or nil
	lock           *os.File                 // DIR/lock, held while the agent runs
}

// entry is a name in an opened directory.
type entry struct {
	dir  *sharedir.Dir
	name string
}

// made is a FIFO the agent made: its name, and the FIFO.
type made struct {
	entry
	id fifo.ID
}

// setContainment records which containment is in force, cgroups or the
// tree stop alone, and has the status file say so: once it is known,
// never a guess before.
func (a *agent) setContainment(cgroups bool) {
	a.mu.Lock()
	a.containment = containTree
	if cgroups {
		a.containment = containCgroup
	}
	a.mu.Unlock()
	a.statusFile.Poke()
}

func (a *agent) snapshotContainment() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.containment
}

func (a *agent) snapshot() status.Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := status.Status{State: string(a.state)}
	if a.source != nil {
		s = a.source()
	}
	s.PID = os.Getpid()
	s.Mode = a.cfg.Mode
	s.Containment = a.containment
	s.StartedAt = a.started
	s.In, s.Out = a.cfg.In, a.cfg.Out
	s.Inputs = a.roles.Inputs()
	if a.control != nil {
		s.Control = a.control.Path()
	}
	s.FDs = procfs.Descriptors()
	s.Goroutines = runtime.NumGoroutine()
	if a.state == child.StateStopped {
		s.State = string(child.StateStopped)
	}
	return s
}

func (a *agent) setState(st child.State) {
	a.mu.Lock()
	a.state = st
	a.mu.Unlock()
}

func (a *agent) setSource(f func() status.Status) {
	a.mu.Lock()
	a.source = f
	a.mu.Unlock()
}

// addCreated records that the agent made the FIFO name in d, to be
// removed at exit (removeCreated): that very FIFO, as it is identified
// now, just after it was made.
func (a *agent) addCreated(d *sharedir.Dir, name string) {
	id, err := fifo.IdentifyAt(d, name)
	if err != nil {
		return // gone or replaced already: nothing of the agent's to remove
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, e := range a.created {
		if e.dir == d && e.name == name {
			a.created[i].id = id // made again: the one before is gone
			return
		}
	}
	a.created = append(a.created, made{entry{d, name}, id})
}

// removeCreated removes the FIFOs the agent made, each if its name still
// names it: a FIFO someone else put in its place is theirs, and stays.
func (a *agent) removeCreated() {
	a.mu.Lock()
	created := a.created
	a.mu.Unlock()
	for _, e := range created {
		fifo.RemoveSameAt(e.dir, e.name, e.id)
	}
}
