package child

import (
	"bytes"
	"errors"
	"strconv"

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
	fd, err := openReserved("/proc/"+pid+"/stat", unix.O_RDONLY)
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
	names, err := dirNames("/proc")
	if err != nil {
		return nil
	}
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

// procSelfPID is the agent's pid as /proc sees it, -1 when it does not.
func procSelfPID() int {
	// The link names the process by its pid as /proc sees it.
	var buf [32]byte
	n, err := unix.Readlink("/proc/self", buf[:])
	if err != nil {
		return -1
	}
	pid, err := strconv.Atoi(string(buf[:n]))
	if err != nil {
		return -1
	}
	return pid
}

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
	tasks, err := dirNames("/proc/self/task")
	if err != nil {
		return nil, false
	}
	var buf [4096]byte
	for _, t := range tasks {
		fd, err := openReserved("/proc/self/task/"+t+"/children", unix.O_RDONLY)
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
