package readwait

import "bytes"

// This file is the fallback where /proc/PID/syscall may not be read
// (ptrace's attach mode denied, as under Yama's ptrace_scope 3 or an LSM
// policy, while read mode is granted): /proc/PID/task/TID/wchan names the
// kernel function the thread sleeps in. It says what the thread waits
// for, not on which descriptor, so the rule is looser: the function is
// one that reads the kind of file the input is, or waits on a poll set,
// and the process's descriptor 0 is the input.

// Functions seen in wchan, by what they wait for; a compiler suffix
// (".constprop.0", ".isra.0") is cut off first. Seen on Linux 6.18:
// python3 reading a pipe in anon_pipe_read, dash reading a terminal in
// wait_woken (n_tty_read's wait), python3, bash and busybox sh in
// select or poll on a terminal in poll_schedule_timeout.
var (
	pipeWaits = []string{"anon_pipe_read", "fifo_pipe_read", "pipe_read", "pipe_wait", "pipe_wait_readable"}
	ttyWaits  = []string{"n_tty_read", "wait_woken"}
	pollWaits = []string{"poll_schedule_timeout", "do_select", "core_sys_select", "do_sys_poll", "ep_poll", "do_epoll_wait"}
)

// byWchan judges thread tid of pid by its wchan. A wchan of "0" is a
// thread that is not asleep (it runs: common), or asleep where the kernel
// does not say, both read as waiting for something else; or a thread
// this agent may not look at, which the link of its descriptor 0 tells.
func (p *Probe) byWchan(pid, tid int) verdict {
	name, err := p.wchan(pid, tid)
	switch {
	case isGone(err):
		return exited
	case err == nil && len(name) > 0 && string(name) != "0":
		reads := p.tty && anyOf(name, ttyWaits) || !p.tty && anyOf(name, pipeWaits) || anyOf(name, pollWaits)
		if reads && p.isInput(pid, 0) {
			return waitsInput
		}
	default:
		if err := p.denied(pid); err != nil {
			p.see(err)
		}
	}
	return waitsOther
}

// wchan reads the wchan of thread tid of pid, less a compiler suffix.
func (p *Probe) wchan(pid, tid int) ([]byte, error) {
	n, err := readFile(p.path.set(pid, tid, "wchan", -1), p.scratch().text[:], -1)
	name := p.scratch().text[:n]
	if i := bytes.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	return name, err
}

// denied returns the error of reading pid's descriptor 0 when it says
// this agent may not (ptrace's read mode, as for wchan), else nil.
func (p *Probe) denied(pid int) error {
	_, err := readlink(p.path.set(pid, 0, "fd", 0), p.scratch().text[:])
	if isDenied(err) {
		return err
	}
	return nil
}

func anyOf(name []byte, names []string) bool {
	for _, s := range names {
		if string(name) == s {
			return true
		}
	}
	return false
}
