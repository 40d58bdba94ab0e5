package child

import (
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"golang.org/x/sys/unix"
)

// Reaper owns wait4 for the whole process: it reaps every child that ends,
// supervised or orphaned, and is the only way to start children.
type Reaper struct {
	log *slog.Logger

	mu      sync.Mutex
	running map[int]*Process  // started and not yet reaped
	live    map[*Process]bool // not yet reaped, or reaped with a Stop under way: what may own an orphan
	stops   uint64            // Stops begun so far, to order them
	treeMu  sync.Mutex        // held across one attribution and its adoptions
	orphans uint64            // reaped processes nobody started
	forking int               // forks under way: an unknown exited pid, or an unknown child in /proc, may be theirs
	forked  *sync.Cond        // on mu: broadcast when a fork under way has registered its child
	held    bool              // reap left an unknown pid for a fork under way
	// gen counts what changes the children attribute weighs (see
	// candidates): a child started, reaped, beginning or ending a Stop;
	// an orphan reaped. A stop compares it to tell when to look again
	// (see outsideSigns).
	gen       uint64
	changedCh chan struct{} // closed at the next change of gen (see nextChange), or nil

	sigs  chan os.Signal
	spawn *spawnThread // forks every child
	quit  chan struct{}
	wg    sync.WaitGroup

	procPID   int            // our pid as /proc sees it; differs when /proc is another namespace's
	foreign   bool           // procPID is not our pid: /proc is another PID namespace's
	inherited map[int]uint64 // children we had before any start (pid to start time): not ours to stop
}

// NewReaper starts reaping. Unless the process is PID 1 it asks the kernel to
// make it a child subreaper, so orphans of its children come to it; a refusal
// is logged as a warning. SIGCHLD is registered before any child can start.
func NewReaper(log *slog.Logger) *Reaper {
	procfs.Reserve()
	r := &Reaper{
		log:     log,
		running: make(map[int]*Process),
		live:    make(map[*Process]bool),
		sigs:    make(chan os.Signal, 64),
		spawn:   newSpawnThread(),
		quit:    make(chan struct{}),
		procPID: procfs.SelfPID(),
	}
	r.forked = sync.NewCond(&r.mu)
	if os.Getpid() != 1 {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			log.Warn("cannot become a child subreaper; orphans of children will not be reaped here", "err", err)
		}
	}
	r.foreign = r.procPID != os.Getpid()
	// An entrypoint shell may have left background jobs before it exec'd
	// the agent; they are its children, but no child's tree. Usually there
	// are none, and one waitid says so.
	r.inherited = make(map[int]uint64)
	if hasChildren() {
		kids, ok := r.children()
		if !ok { // no /proc/self/task/*/children: scan all of /proc
			for _, q := range procfs.Processes() {
				if q.PPID == r.procPID {
					kids = append(kids, q.PID)
				}
			}
		}
		for _, pid := range kids {
			if q, ok := procfs.Stat(strconv.Itoa(pid)); ok {
				r.inherited[q.PID] = q.Start
			}
		}
	}
	if r.foreign {
		log.Warn("/proc belongs to another PID namespace; stopping a tree reaches only its process group",
			"pid", os.Getpid(), "proc_pid", r.procPID)
	}
	signal.Notify(r.sigs, syscall.SIGCHLD)
	r.wg.Add(1)
	go r.reapLoop()
	return r
}

// Close stops reaping and waits for the Reaper's goroutines. Call it after
// every started child has been reaped: the children's parent-death signal is
// tied to the spawning thread, which goes away with it.
//
// SIGCHLD stays registered on the Reaper's channel, which nobody reads any
// more (os/signal drops what does not fit): signal.Stop would cost a round
// trip to the runtime's signal thread, on the way out of every agent, to
// undo what the process's exit undoes anyway.
func (r *Reaper) Close() {
	r.spawn.close()
	close(r.quit)
	r.wg.Wait()
	r.reap()
}

// Orphans returns how many processes the Reaper reaped that it had not started.
func (r *Reaper) Orphans() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.orphans
}

func (r *Reaper) reapLoop() {
	defer r.wg.Done()
	// A missed or coalesced SIGCHLD must not leave zombies: look again now
	// and then even without one; seldom, since each look wakes an idle
	// agent.
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-r.sigs:
		case <-tick.C:
		}
		r.reap()
	}
}

// changedLocked records, with r.mu held, a change of what attribute weighs
// (see gen), and wakes those waiting for one (see nextChange).
func (r *Reaper) changedLocked() {
	r.gen++
	if r.changedCh != nil {
		close(r.changedCh)
		r.changedCh = nil
	}
}

// nextChange returns a channel that is closed at the next change of gen:
// when the Reaper reaps a process, one it started or an orphan, a child
// starts, or a Stop begins or ends. A stop that waits for the orphans of
// its tree to go learns so of each that goes, since they are the agent's
// children. Take it before looking at what it announces, so that no
// change in between is missed.
func (r *Reaper) nextChange() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changedCh == nil {
		r.changedCh = make(chan struct{})
	}
	return r.changedCh
}

// reap collects every exited child; several exits may share one SIGCHLD.
// It holds mu across each wait4: whoever holds mu and finds a started child
// unreaped knows its pid (and so its group's id) still names it. mu is not
// held across a fork: while one is under way, an exited pid that is not
// registered may be the new child's, so reap leaves it a zombie (it looks
// with WNOWAIT first) until fork has registered its child and its start
// time, and reaps again.
func (r *Reaper) reap() {
	for {
		var ws unix.WaitStatus
		r.mu.Lock()
		target := -1
		if r.forking > 0 {
			next, ok := exitedChild()
			if !ok {
				r.mu.Unlock()
				return
			}
			if r.running[next] == nil {
				r.held = true // fork reaps again once it has registered its child
				r.mu.Unlock()
				return
			}
			target = next
		}
		pid, err := unix.Wait4(target, &ws, unix.WNOHANG, nil)
		var p *Process
		if err == nil && pid > 0 {
			r.changedLocked()
			if p = r.running[pid]; p != nil {
				delete(r.running, pid)
				p.reaped = true
				if p.stops == 0 {
					delete(r.live, p)
				}
			} else {
				r.orphans++
			}
		}
		r.mu.Unlock()
		if err == unix.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		if p != nil {
			p.exit(ExitStatus{ws: ws})
		} else {
			r.log.Debug("reaped orphan", "pid", pid, "status", ExitStatus{ws: ws}.String())
		}
	}
}
