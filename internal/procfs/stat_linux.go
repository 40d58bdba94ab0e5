package procfs

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"
)

// Proc is one line of /proc/PID/stat, as much as a tree walk needs.
type Proc struct {
	PID, PPID, PGID, SID int
	State                byte   // R, S, D, Z, X, ...
	Start                uint64 // clock ticks after boot
}

// Stat parses /proc/PID/stat. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'. It uses bare system
// calls: a /proc scan reads every process's file, and os.ReadFile would
// spend three times as many.
func Stat(pid string) (Proc, bool) {
	var buf [1024]byte
	fd, err := Open("/proc/"+pid+"/stat", unix.O_RDONLY)
	if err != nil {
		return Proc{}, false
	}
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil || n <= 0 {
		return Proc{}, false
	}
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Proc{}, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 20 {
		return Proc{}, false
	}
	p := Proc{State: f[0][0]}
	p.PID, _ = strconv.Atoi(pid)
	p.PPID, _ = strconv.Atoi(string(f[1]))
	p.PGID, _ = strconv.Atoi(string(f[2]))
	p.SID, _ = strconv.Atoi(string(f[3]))
	p.Start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	return p, true
}

// Processes lists every live process in /proc; zombies are left out, since
// they hold nothing and only wait to be reaped.
func Processes() []Proc {
	names, err := DirNames("/proc")
	if err != nil {
		return nil
	}
	out := make([]Proc, 0, len(names))
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		if p, ok := Stat(name); ok && p.State != 'Z' && p.State != 'X' {
			out = append(out, p)
		}
	}
	return out
}

// SelfPID is the caller's pid as /proc sees it, -1 when it does not.
func SelfPID() int {
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
