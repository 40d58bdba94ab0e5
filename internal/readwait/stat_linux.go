package readwait

import "bytes"

// This file reads what /proc tells of a process as a whole, to every
// user (hidepid aside): its group, and how many threads it has.

// Fields of /proc/PID/stat after the command name, counted from its
// state (proc(5)'s field 3).
const (
	statPgrp    = 5 - 3
	statThreads = 20 - 3
)

// statField is field i (see statPgrp) of pid's /proc/PID/stat, or -1.
func (p *Probe) statField(pid, i int) int {
	n, err := readFile(p.path.set(pid, 0, "stat", -1), p.scratch().text[:], -1)
	if err != nil {
		return -1
	}
	b := p.scratch().text[:n]
	end := bytes.LastIndexByte(b, ')') // the command name may hold anything
	if end < 0 {
		return -1
	}
	b = b[end+1:]
	for range i {
		_, b = field(b)
	}
	f, _ := field(b)
	if v, ok := parseDec(f); ok {
		return v
	}
	return -1
}

// group is the process group of pid, or -1.
func (p *Probe) group(pid int) int { return p.statField(pid, statPgrp) }

// threads is how many threads process pid has, or -1. The kernel gives
// the directory /proc/PID/task a link count of 2 plus that number (since
// Linux 2.6): one statx, where the text of /proc/PID/stat costs as much
// as the rest of a probe. The text is the fallback (no statx before
// Linux 4.11).
func (p *Probe) threads(pid int) int {
	if n, err := nlink(p.path.set(pid, 0, "task", -1), &p.scratch().stx); err == nil && n > 2 {
		return int(n) - 2
	}
	return p.statField(pid, statThreads)
}
