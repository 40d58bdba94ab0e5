package child

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"golang.org/x/sys/unix"
)

// proc is one line of /proc/PID/stat, as much as a tree walk needs.
type proc = procfs.Proc

// hasChildren reports whether the process has any child, running or a
// zombie, of any exit signal: waitid with WNOWAIT reaps nothing, and fails
// with ECHILD only when there is none. It errs towards true.
func hasChildren() bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
		if err != unix.EINTR {
			return err != unix.ECHILD
		}
	}
}

// children lists the agent's children from the children files of
// /proc/self/task; ok is false when the kernel does not provide those
// files.
//
// Only two threads of the agent can have children: the spawn thread,
// which forks every child, and the thread group's leader, which holds the
// children the agent inherited (an exec leaves every child to it) and
// gets every orphan reparented to the agent (the kernel gives an orphan
// to the first live thread of its new parent's group, the leader, which
// the Go runtime never ends). So children reads those two files, not
// every thread's: a stop looks at the agent's children several times,
// and the runtime holds dozens of idle threads (procinit.ReserveThreads).
// Where the spawn thread's task is not known, every thread's file is
// read.
func (r *Reaper) children() (pids []int, ok bool) {
	leader := strconv.Itoa(r.procPID)
	tasks := []string{leader + "/task/" + leader}
	if r.spawn.task != tasks[0] { // the spawn goroutine may have locked the leader itself
		tasks = append(tasks, r.spawn.task)
	}
	if r.spawn.task == "" {
		names, err := procfs.DirNames("/proc/self/task")
		if err != nil {
			return nil, false
		}
		tasks = tasks[:0]
		for _, t := range names {
			tasks = append(tasks, "self/task/"+t)
		}
	}
	var buf [4096]byte
	for _, t := range tasks {
		fd, err := procfs.Open("/proc/"+t+"/children", unix.O_RDONLY)
		if err != nil {
			if errors.Is(err, unix.ENOENT) && strings.HasSuffix(t, "/task/"+leader) {
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
