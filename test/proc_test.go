//go:build linux

package test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procStat is the part of /proc/PID/stat the tests look at.
type procStat struct {
	pid     int
	comm    string
	state   byte // R, S, D, Z, ...
	ppid    int
	pgrp    int
	session int
	cpu     int // utime + stime, in clock ticks
	start   int // clock ticks after boot: with pid, names a process for good
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: %q", pid, b)
	}
	// Fields after the command: state(3) ppid(4) pgrp(5) session(6) ...
	// utime(14) stime(15) ... starttime(22).
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: %q", pid, b)
	}
	num := func(i int) int { n, _ := strconv.Atoi(f[i]); return n }
	return procStat{
		pid: pid, comm: string(b[open+1 : end]), state: f[0][0],
		ppid: num(1), pgrp: num(2), session: num(3), cpu: num(11) + num(12), start: num(19),
	}, nil
}

// pids lists the processes in /proc.
func pids() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.state != 'Z'
}

// markedProcs lists the live processes whose environment carries
// markerEnv=marker. Zombies have no readable environment and are not listed.
func markedProcs(marker string) []procStat {
	want := []byte(markerEnv + "=" + marker + "\x00")
	var out []procStat
	for _, pid := range pids() {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !bytes.HasPrefix(env, want) && !bytes.Contains(env, append([]byte{0}, want...)) {
			continue
		}
		if st, err := readStat(pid); err == nil && st.state != 'Z' {
			out = append(out, st)
		}
	}
	return out
}

// procsWhere lists the processes in /proc for which keep is true.
func procsWhere(keep func(procStat) bool) []procStat {
	var out []procStat
	for _, pid := range pids() {
		if st, err := readStat(pid); err == nil && keep(st) {
			out = append(out, st)
		}
	}
	return out
}

// zombiesOf lists the zombie children of ppid.
func zombiesOf(ppid int) []procStat {
	return procsWhere(func(st procStat) bool { return st.ppid == ppid && st.state == 'Z' })
}

// childrenOf lists the live children of ppid.
func childrenOf(ppid int) []procStat {
	return procsWhere(func(st procStat) bool { return st.ppid == ppid && st.state != 'Z' })
}

// treeOf lists pid and its live descendants, parents before children,
// from one look at /proc.
func treeOf(pid int) []int {
	kids := map[int][]int{}
	for _, st := range procsWhere(func(st procStat) bool { return st.state != 'Z' }) {
		kids[st.ppid] = append(kids[st.ppid], st.pid)
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, kids[tree[i]]...)
	}
	return tree
}

// fdCount counts the open descriptors of pid ("self" for this process; the
// descriptor used to read the directory is counted, consistently).
func fdCount(pid string) int {
	ents, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// fdTargets describes the open descriptors of pid, for failure messages.
func fdTargets(pid string) string {
	ents, _ := os.ReadDir("/proc/" + pid + "/fd")
	var b strings.Builder
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join("/proc", pid, "fd", e.Name()))
		fmt.Fprintf(&b, "  %s -> %s\n", e.Name(), target)
	}
	return b.String()
}

// holders lists, per pid other than this process, the descriptors whose
// target is one of paths (also when the path was deleted since).
func holders(paths ...string) map[int][]string {
	self := os.Getpid()
	out := map[int][]string{}
	for _, pid := range pids() {
		if pid == self {
			continue
		}
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			target, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			for _, p := range paths {
				if target == p || target == p+" (deleted)" {
					out[pid] = append(out[pid], e.Name()+" -> "+target)
				}
			}
		}
	}
	return out
}

// cmdline returns the command line of pid, arguments joined by spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

func describe(procs []procStat) string {
	var b strings.Builder
	for _, p := range procs {
		fmt.Fprintf(&b, "\n  pid %d ppid %d pgrp %d sid %d state %c (%s) %q",
			p.pid, p.ppid, p.pgrp, p.session, p.state, p.comm, cmdline(p.pid))
	}
	return b.String()
}
