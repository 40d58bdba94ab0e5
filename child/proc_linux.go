package child

import (
	"bytes"
	"errors"
	"strconv"

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

// children lists the agent's children from /proc/self/task/*/children;
// ok is false when the kernel does not provide those files.
func (r *Reaper) children() (pids []int, ok bool) {
	tasks, err := procfs.DirNames("/proc/self/task")
	if err != nil {
		return nil, false
	}
	var buf [4096]byte
	for _, t := range tasks {
		fd, err := procfs.Open("/proc/self/task/"+t+"/children", unix.O_RDONLY)
		if err != nil {
			if errors.Is(err, unix.ENOENT) && t == strconv.Itoa(r.procPID) {
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
