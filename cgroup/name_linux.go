package cgroup

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fifobridge/fifobridge/internal/procfs"
)

// agentID names an agent for good: a pid is reused, a pid with its start
// time is not; and pids mean something only in their PID namespace.
type agentID struct {
	pidNS uint64 // inode of the PID namespace
	pid   int
	start uint64 // clock ticks after boot
}

const cgroupPrefix = "fifobridge-"

// name is the name of the agent's seq'th cgroup.
func (a agentID) name(seq uint64) string {
	return fmt.Sprintf("%s%d-%d-%d-%d", cgroupPrefix, a.pidNS, a.pid, a.start, seq)
}

// parseCgroupName reads the agent back from a cgroup's name; ok is false
// for a name no agent makes.
func parseCgroupName(name string) (a agentID, ok bool) {
	rest, found := strings.CutPrefix(name, cgroupPrefix)
	if !found {
		return agentID{}, false
	}
	f := strings.Split(rest, "-")
	if len(f) != 4 {
		return agentID{}, false
	}
	var n [4]uint64
	for i, s := range f {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil || s != strconv.FormatUint(v, 10) {
			return agentID{}, false
		}
		n[i] = v
	}
	if n[1] == 0 || n[1] > 1<<31 {
		return agentID{}, false
	}
	return agentID{pidNS: n[0], pid: int(n[1]), start: n[2]}, true
}

// parsePidNS reads the inode from a /proc/PID/ns/pid link, "pid:[N]".
func parsePidNS(link string) (uint64, bool) {
	s, ok := strings.CutPrefix(link, "pid:[")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, "]")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// selfID is the agent's own identity.
func selfID() (agentID, error) {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return agentID{}, fmt.Errorf("read pid namespace: %w", err)
	}
	ns, ok := parsePidNS(link)
	if !ok {
		return agentID{}, fmt.Errorf("read pid namespace: unexpected %q", link)
	}
	q, ok := procfs.Stat("self")
	if !ok {
		return agentID{}, fmt.Errorf("read own start time from /proc/self/stat")
	}
	return agentID{pidNS: ns, pid: os.Getpid(), start: q.Start}, nil
}

// alive reports whether agent a, of the PID namespace ns the caller is
// in, still runs; known is false when a is of another namespace, whose
// pids cannot be checked from here.
func (a agentID) alive(ns uint64) (alive, known bool) {
	if a.pidNS != ns {
		return false, false
	}
	q, ok := procfs.Stat(strconv.Itoa(a.pid))
	return ok && q.Start == a.start && q.State != 'Z' && q.State != 'X', true
}
