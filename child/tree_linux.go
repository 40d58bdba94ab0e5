package child

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// proc is one line of /proc/PID/stat, as much as a tree walk needs.
type proc struct {
	pid, ppid, pgid, sid int
	state                byte
	start                uint64 // clock ticks after boot
}

// readProc parses /proc/PID/stat. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'. It uses bare system
// calls: a /proc scan reads every process's file, and os.ReadFile would
// spend three times as many.
func readProc(pid string) (proc, bool) {
	var buf [1024]byte
	fd, err := unix.Open("/proc/"+pid+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return proc{}, false
	}
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil || n <= 0 {
		return proc{}, false
	}
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return proc{}, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 20 {
		return proc{}, false
	}
	p := proc{state: f[0][0]}
	p.pid, _ = strconv.Atoi(pid)
	p.ppid, _ = strconv.Atoi(string(f[1]))
	p.pgid, _ = strconv.Atoi(string(f[2]))
	p.sid, _ = strconv.Atoi(string(f[3]))
	p.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	return p, true
}

// processes lists every live process in /proc; zombies are left out, since
// they hold nothing and only wait to be reaped.
func processes() []proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	out := make([]proc, 0, len(names))
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		if p, ok := readProc(name); ok && p.state != 'Z' && p.state != 'X' {
			out = append(out, p)
		}
	}
	return out
}

func procSelfPID() int {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return -1
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return -1
	}
	pid, _ := strconv.Atoi(string(f[0]))
	return pid
}

// tree returns the pids of p's tree still running: members of its process
// group, its descendants (also those that left the group with setsid), and
// orphans reparented to the agent that started after p and belong to no
// other running child. Processes the agent inherited (an entrypoint shell's
// background jobs) started before p and are left alone.
func (r *Reaper) tree(p *Process) []int {
	if r.procPID != os.Getpid() {
		return nil // pids in /proc are another namespace's; only the group is reachable
	}
	all := processes()
	others := r.otherGroups(p)
	children := make(map[int][]int, len(all))
	for _, q := range all {
		children[q.ppid] = append(children[q.ppid], q.pid)
	}
	in := make(map[int]bool)
	var add func(pid int)
	add = func(pid int) {
		if in[pid] || pid == r.procPID || pid <= 1 { // never ourselves or init
			return
		}
		in[pid] = true
		for _, c := range children[pid] {
			add(c)
		}
	}
	for _, q := range all {
		switch {
		case q.pid == r.procPID:
		case q.pid == p.Pid && !r.exited(p), q.pgid == p.Pid:
			add(q.pid)
		case q.ppid == r.procPID && r.orphanOf(p, q, others):
			add(q.pid)
		}
	}
	pids := make([]int, 0, len(in))
	for pid := range in {
		pids = append(pids, pid)
	}
	return pids
}

// orphanOf reports whether q, a child of the agent, is taken for an orphan
// of p: started after p, not inherited by the agent, and of no other running
// child's group or session.
func (r *Reaper) orphanOf(p *Process, q proc, others map[int]bool) bool {
	return q.start >= p.startTicks && !r.isInherited(q) &&
		!others[q.pid] && !others[q.pgid] && !others[q.sid]
}

// treeGone reports, without scanning /proc, that nothing of the tree of p
// (which has exited) runs: its process group is empty and the agent has no
// child that could be an orphan of p. That suffices, since the chain of
// parents of any live descendant of p ends in a member of its group or in a
// child of the agent, to which orphans are reparented.
func (r *Reaper) treeGone(p *Process) bool {
	if !r.exited(p) || syscall.Kill(-p.Pid, 0) != syscall.ESRCH {
		return false
	}
	if r.procPID != os.Getpid() {
		return true // only the group is reachable at all
	}
	kids, ok := r.children()
	if !ok {
		return false
	}
	others := r.otherGroups(p)
	for _, pid := range kids {
		if others[pid] {
			continue
		}
		q, ok := readProc(strconv.Itoa(pid))
		if ok && q.state != 'Z' && r.orphanOf(p, q, others) {
			return false
		}
	}
	return true
}

// children lists the agent's children from /proc/self/task/*/children;
// ok is false when the kernel does not provide those files.
func (r *Reaper) children() (pids []int, ok bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, false
	}
	var buf [4096]byte
	for _, t := range tasks {
		fd, err := unix.Open("/proc/self/task/"+t.Name()+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) && t.Name() == strconv.Itoa(os.Getpid()) {
				return nil, false // no CONFIG_PROC_CHILDREN
			}
			continue // the thread is gone
		}
		n, _ := unix.Read(fd, buf[:])
		unix.Close(fd)
		if n == len(buf) {
			return nil, false // more than fits: let the full scan decide
		}
		for _, f := range bytes.Fields(buf[:max(n, 0)]) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, true
}

func (r *Reaper) isInherited(q proc) bool {
	start, ok := r.inherited[q.pid]
	return ok && start == q.start
}

// signalTree sends sig to p's process group and to every process of its tree.
func (r *Reaper) signalTree(p *Process, sig syscall.Signal) (left int) {
	syscall.Kill(-p.Pid, sig)
	pids := r.tree(p)
	for _, pid := range pids {
		syscall.Kill(pid, sig)
	}
	return len(pids)
}

// killPatience is how long Stop waits for SIGKILLed processes before it
// warns that some will not die.
const killPatience = 5 * time.Second

// Stop stops p and the rest of its tree: sig to all of it, then, when
// anything still runs after timeout, SIGKILL. It returns p's exit status once
// p has been reaped and nothing of its tree is left. Calling it after p
// exited by itself cleans up what p left behind.
func (r *Reaper) Stop(p *Process, sig syscall.Signal, timeout time.Duration) ExitStatus {
	if r.treeGone(p) {
		return p.Status() // the common case, answered without a /proc scan
	}
	deadline := time.Now().Add(timeout)
	if r.signalTree(p, sig) > 0 || !r.exited(p) {
		r.waitTree(p, deadline)
	}
	for start := time.Now(); r.signalTree(p, syscall.SIGKILL) > 0 || !r.exited(p); {
		// SIGKILL cannot be ignored; this loop only catches processes forked
		// between a scan and the signal, and the child's own reaping.
		if time.Since(start) > killPatience {
			r.log.Warn("processes survive SIGKILL (uninterruptible sleep?)", "pid", p.Pid, "left", r.tree(p))
			start = time.Now()
		}
		r.waitTree(p, time.Now().Add(50*time.Millisecond))
	}
	return p.Status()
}

func (r *Reaper) exited(p *Process) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitTree waits until p is reaped and its tree is empty, or until deadline.
func (r *Reaper) waitTree(p *Process, deadline time.Time) {
	for time.Now().Before(deadline) {
		if r.exited(p) && len(r.tree(p)) == 0 {
			return
		}
		wait := time.Until(deadline)
		if wait > 10*time.Millisecond {
			wait = 10 * time.Millisecond
		}
		select {
		case <-p.done:
			if len(r.tree(p)) == 0 {
				return
			}
			time.Sleep(wait)
		case <-time.After(wait):
		}
	}
}
