package child

import (
	"bytes"
	"errors"
	"os"
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
// parentheses, so fields are counted from the last ')'.
func readProc(pid string) (proc, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return proc{}, false
	}
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
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]proc, 0, len(ents))
	for _, e := range ents {
		name := e.Name()
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
	link, err := os.Readlink("/proc/self")
	if err != nil {
		return -1
	}
	pid, err := strconv.Atoi(link)
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
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, false
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && t.Name() == strconv.Itoa(r.procPID) {
				return nil, false // no CONFIG_PROC_CHILDREN
			}
			continue // the thread is gone
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, true
}
