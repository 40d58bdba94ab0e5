package child

import (
	"os"
	"strconv"
	"syscall"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"golang.org/x/sys/unix"
)

// Signalling by number is only safe while the number cannot name another
// process. A child's pid is safe until the Reaper reaps it: the reaper holds
// r.mu across wait4, so whoever holds r.mu and sees the child unreaped may
// use its pid and its group's id (the group cannot be recycled while its
// leader's pid is taken). After that, the group is never signalled as a
// whole: the members a /proc scan finds are signalled one by one through
// pidfds, each checked to still be the process the scan saw.

// Signal sends sig to the child's process group, or to the child alone when
// it left its group. Once the child has been reaped it returns
// os.ErrProcessDone and signals nothing: its pid and its group's id may
// name someone else by then.
func (p *Process) Signal(sig syscall.Signal) error {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	if p.reaped {
		return os.ErrProcessDone
	}
	err := syscall.Kill(-p.Pid, sig)
	if err == syscall.ESRCH {
		// Its pid, unreaped, still names it: no pidfd is needed, and
		// none is held while it runs (a descriptor per child, which an
		// idle session would pay).
		err = syscall.Kill(p.Pid, sig)
	}
	return err
}

// signalGroup sends sig to p's process group and reports whether it did: it
// does only while p is not reaped, and the group has a member.
func (r *Reaper) signalGroup(p *Process, sig syscall.Signal) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !p.reaped && syscall.Kill(-p.Pid, sig) == nil
}

// signalProc sends sig to q if q is still the process a scan saw: a pidfd
// pins the process, and the start time read after opening it tells whether
// the pid was reused in between. Without pidfds it falls back to kill(2),
// racy only against a pid reused since the scan.
func signalProc(q proc, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(q.PID, 0)
	switch {
	case err == unix.ESRCH:
		return // gone
	case err != nil:
		syscall.Kill(q.PID, sig)
		return
	}
	defer unix.Close(fd)
	if now, ok := procfs.Stat(strconv.Itoa(q.PID)); ok && now.Start == q.Start {
		unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}

// signalTree sends sig once to every process of p's tree: to its group as
// a whole while that is safe, then to each process of the tree outside the
// group. The tree is listed first: a process that joins the group later
// gets the group's signal, one that leaves it later is not signalled twice.
// It returns how many processes the tree had.
func (r *Reaper) signalTree(p *Process, sig syscall.Signal, tree func(*Process) []proc) int {
	procs := tree(p)
	grouped := r.signalGroup(p, sig)
	for _, q := range procs {
		if grouped && q.PGID == p.Pid {
			continue // the group's signal reached it
		}
		signalProc(q, sig)
	}
	return len(procs)
}
