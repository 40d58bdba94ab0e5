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

// anchorMark marks the last field of an anchor's name (see anchor_linux.go).
const anchorMark = "a"

// name is the name of the agent's seq'th cgroup.
func (a agentID) name(seq uint64) string {
	return fmt.Sprintf("%s%d-%d-%d-%d", cgroupPrefix, a.pidNS, a.pid, a.start, seq)
}

// anchorName is the name of the agent's anchor, made at its try'th try.
func (a agentID) anchorName(try uint64) string {
	return fmt.Sprintf("%s%d-%d-%d-%s%d", cgroupPrefix, a.pidNS, a.pid, a.start, anchorMark, try)
}

// parseCgroupName reads the agent back from a cgroup's name, and whether
// the cgroup is that agent's anchor (then n is its try, else its seq); ok
// is false for a name no agent makes.
func parseCgroupName(name string) (a agentID, anchor bool, n uint64, ok bool) {
	rest, found := strings.CutPrefix(name, cgroupPrefix)
	if !found {
		return agentID{}, false, 0, false
	}
	f := strings.Split(rest, "-")
	if len(f) != 4 {
		return agentID{}, false, 0, false
	}
	f[3], anchor = strings.CutPrefix(f[3], anchorMark)
	var v [4]uint64
	for i, s := range f {
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil || s != strconv.FormatUint(u, 10) {
			return agentID{}, false, 0, false
		}
		v[i] = u
	}
	if v[1] == 0 || v[1] > 1<<31 {
		return agentID{}, false, 0, false
	}
	return agentID{pidNS: v[0], pid: int(v[1]), start: v[2]}, anchor, v[3], true
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
