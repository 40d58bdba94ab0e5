package child

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/internal/procfs"
	"golang.org/x/sys/unix"
)

// Spec says how to start a child.
type Spec struct {
	// Program is the name or path of the executable; a name without a slash
	// is looked up in PATH, as LookPath does, for Credential's user, on
	// Env's PATH (the agent's when Env sets none), with relative names
	// taken from Dir.
	Program string
	// Path, if set, is the executable already looked up, used as is; Program
	// is then only argv[0].
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Env is the environment; nil means the agent's own.
	Env []string
	// Dir is the working directory; "" means the agent's own.
	Dir string
	// Stdin, Stdout and Stderr become the child's descriptors 0, 1 and 2,
	// its only ones. Fd is called on them, which puts them in blocking mode:
	// pass the child's ends, not ones the agent polls.
	Stdin, Stdout, Stderr *os.File
	// Credential, if set, is the uid and gid the child runs as.
	Credential *syscall.Credential
	// Signals, if set, is the signal mask and ignored set the child
	// starts with (less HUP, INT, QUIT, TSTP, TTIN and TTOU for a Ctty
	// child); else it gets the runtime's.
	Signals *SignalState
	// Terminal, if set, is the controlling terminal whose foreground
	// process group the child's group becomes, when the agent's group has
	// it as the child starts.
	Terminal *Terminal
	// Cgroups, if set, gives the child a new cgroup of its own, which it
	// starts in (at clone time, before its program runs) and which Stop
	// kills and removes.
	Cgroups *cgroup.Manager
	// Ctty, if set, is the slave side of a pseudo-terminal (tty.OpenPTY): it
	// becomes the child's descriptors 0, 1 and 2 in place of Stdin, Stdout
	// and Stderr, and its controlling terminal. The child then leads a new
	// session (and so its own process group), starts with the job-control
	// signals at their default and unblocked, and Terminal is not used.
	Ctty *os.File
}

// Process is a started child.
type Process struct {
	Pid     int
	Started time.Time

	r          *Reaper
	startTicks uint64           // start time in /proc, to tell its orphans from older processes
	reaped     bool             // guarded by r.mu
	askedSig   syscall.Signal   // the stop signal its tree was asked with, or 0; guarded by r.mu
	asked      map[procKey]bool // the processes asked with askedSig; guarded by r.mu
	askedAt    time.Time        // when the tree was first asked with askedSig; guarded by r.mu
	warned     bool             // a stop has warned that it ignores its stop signal; guarded by r.mu
	stops      int              // Stops under way; guarded by r.mu
	stopSeq    uint64           // when the latest of them began, in r.stops; guarded by r.mu
	adopted    []procKey        // orphans its Stops took (see attribute); guarded by r.mu
	cg         *cgroup.Group    // its own cgroup, or nil
	term       *Terminal        // the terminal it was given the foreground of, or nil
	done       chan struct{}
	status     ExitStatus
}

// Done is closed when the child has been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Status is how the child ended; valid once Done is closed.
func (p *Process) Status() ExitStatus {
	<-p.done
	return p.status
}

func (p *Process) exit(s ExitStatus) {
	p.status = s
	close(p.done)
}

// forkExec is syscall.ForkExec; tests replace it to make a start fail.
var forkExec = syscall.ForkExec

type spawnRequest struct {
	path    string
	argv    []string
	attr    *syscall.ProcAttr
	signals *SignalState
	term    *Terminal
	cg      *cgroup.Group
}

type spawnResult struct {
	p   *Process
	err error
}

// Start starts a child as the Spec says, in its own process group, with
// SIGKILL as its parent-death signal.
func (r *Reaper) Start(spec Spec) (*Process, error) {
	path := spec.Path
	if path == "" {
		var err error
		if path, err = lookPathFor(&spec); err != nil {
			return nil, &StartError{Program: spec.Program, Err: err}
		}
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	req := spawnRequest{
		path: path,
		argv: append([]string{spec.Program}, spec.Args...),
		attr: &syscall.ProcAttr{
			Dir: spec.Dir,
			Env: env,
			Sys: &syscall.SysProcAttr{
				Setpgid:    true,
				Pdeathsig:  syscall.SIGKILL,
				Credential: spec.Credential,
			},
		},
		signals: spec.Signals,
		term:    spec.Terminal,
	}
	if spec.Ctty != nil {
		// A session leader may not call setpgid; setsid gave it its group.
		fd := spec.Ctty.Fd()
		req.attr.Files = []uintptr{fd, fd, fd}
		req.attr.Sys.Setpgid, req.attr.Sys.Setsid = false, true
		req.attr.Sys.Setctty, req.attr.Sys.Ctty = true, 0 // Ctty is the child's fd
		req.term = nil
		req.signals = spec.Signals.forTerminal()
	} else {
		req.attr.Files = []uintptr{spec.Stdin.Fd(), spec.Stdout.Fd(), spec.Stderr.Fd()}
	}
	res := r.submit(req, spec.Cgroups)
	// The descriptors were dup'ed into the child; keep the files alive until then.
	runtime.KeepAlive(spec.Stdin)
	runtime.KeepAlive(spec.Stdout)
	runtime.KeepAlive(spec.Stderr)
	runtime.KeepAlive(spec.Ctty)
	if res.err != nil {
		return nil, &StartError{Program: spec.Program, Err: res.err}
	}
	return res.p, nil
}

// submit has the spawning thread fork req, in a new cgroup of cgroups when
// that is set. A cgroup the child cannot be started in (EBUSY: cgroup v2's
// rule against processes in a cgroup whose subtree has controllers;
// EOPNOTSUPP: a threaded cgroup) is removed, and the child starts without
// one, after a warning: the tree stop still applies. No cgroup is left
// when the start fails.
func (r *Reaper) submit(req spawnRequest, cgroups *cgroup.Manager) spawnResult {
	if cgroups != nil {
		cg, err := cgroups.New()
		if err != nil {
			return spawnResult{err: err}
		}
		req.cg = cg
		req.attr.Sys.UseCgroupFD, req.attr.Sys.CgroupFD = true, cg.Dirfd()
	}
	var res spawnResult
	if err := r.spawn.run(func() { res = r.fork(req) }); err != nil {
		if req.cg != nil {
			req.cg.Remove()
		}
		return spawnResult{err: err}
	}
	if req.cg == nil {
		return res
	}
	if res.err == nil {
		req.cg.CloseDirfd() // the child is in it: the cgroup lives on by its path
		return res
	}
	req.cg.Remove() // nothing ever ran in it
	if !errors.Is(res.err, unix.EBUSY) && !errors.Is(res.err, unix.EOPNOTSUPP) {
		return res
	}
	r.log.Warn("cannot start a child in its own cgroup; it runs without one (tree stop only)",
		"cgroup", req.cg.Path(), "err", res.err)
	req.cg = nil
	req.attr.Sys.UseCgroupFD, req.attr.Sys.CgroupFD = false, 0
	return r.submit(req, nil)
}

// onSpawnThread runs f on the thread that forks every child.
func (r *Reaper) onSpawnThread(f func() error) error {
	var err error
	if rerr := r.spawn.run(func() { err = f() }); rerr != nil {
		return rerr
	}
	return err
}

func (r *Reaper) fork(req spawnRequest) spawnResult {
	r.mu.Lock()
	r.forking++ // from now until the child is registered, reap leaves unknown pids be
	r.mu.Unlock()
	res := r.forkUnlocked(req)
	r.mu.Lock()
	r.forking--
	if res.p != nil {
		r.running[res.p.Pid] = res.p
		r.live[res.p] = true
		r.changedLocked()
	}
	again := r.held && r.forking == 0
	if again {
		r.held = false
	}
	r.forked.Broadcast()
	r.mu.Unlock()
	if again {
		// What reap left for this fork: the reap loop, the one caller of
		// wait4, looks again.
		select {
		case r.sigs <- syscall.SIGCHLD:
		default: // it has a look pending already
		}
	}
	return res
}

// beforeFork, when set (only by tests), runs on the spawn thread just
// before each fork.
var beforeFork func()

// forkUnlocked forks and execs req and makes its Process, which fork
// registers. The reaper leaves every unregistered pid unreaped meanwhile,
// so the start time is the child's.
func (r *Reaper) forkUnlocked(req spawnRequest) spawnResult {
	if req.term != nil {
		req.attr.Sys.Foreground = false // a retry asks the terminal again
	}
	if req.term != nil && req.term.foreground() {
		// The child sets its group in the foreground before exec, with
		// every signal blocked, so it gets no SIGTTOU for it.
		req.attr.Sys.Foreground, req.attr.Sys.Ctty = true, req.term.fd
	}
	if beforeFork != nil {
		beforeFork()
	}
	pid, err := req.signals.forkWith(func() (int, error) {
		return forkExec(req.path, req.argv, req.attr)
	})
	if err != nil {
		if req.attr.Sys.Foreground && !req.term.foreground() {
			req.term.takeBack() // from a child that failed after taking it
		}
		return spawnResult{err: err}
	}
	p := &Process{Pid: pid, Started: time.Now(), r: r, cg: req.cg, done: make(chan struct{})}
	if req.attr.Sys.Foreground {
		p.term = req.term
	}
	if q, ok := procfs.Stat(strconv.Itoa(pid)); ok {
		p.startTicks = q.Start
	}
	return spawnResult{p: p}
}
