//go:build linux

// Package readwait tells whether the reader of a child's input is blocked
// reading it, as Linux shows another process's wait in /proc: the sign a
// conversation takes that the child is at its prompt (CONTRACT.md,
// "Conversations"), instead of waiting -settle for its output to stay
// quiet.
//
// # The rule
//
// Probe.Blocked(pgid) is true when the only thread of the group's leader
// (pid pgid), or of a descendant of it in the same group (breadth first,
// at most 16 processes, 64 threads each), is asleep, when it looks, in
//
//   - read, readv, pread64, preadv, preadv2 or splice on a descriptor that
//     is the input;
//   - select or pselect6 whose read set holds such a descriptor, or poll
//     or ppoll that asks for POLLIN or POLLRDNORM on one (the sets are
//     read from the process's memory, /proc/PID/mem; at most 16
//     descriptors of a set are looked at);
//   - epoll_wait, epoll_pwait or epoll_pwait2 on an epoll descriptor that
//     watches the input for EPOLLIN (/proc/PID/fdinfo/N).
//
// A descriptor is the input when its link, /proc/PID/fd/N, reads as the
// input's own: "pipe:[INODE]" for a pipe, and for a terminal the slave's
// path as the agent sees it, which names its devpts mount as well; an
// epoll set's entries are compared by inode and device. What waits is
// read from /proc/PID/task/TID/syscall, in the system call numbers of the
// process's own ABI (the ELF header of /proc/PID/exe; an x86 agent knows
// both x86 ABIs, another agent only its own).
//
// A reader counts only when its process has a single thread (field
// num_threads of /proc/PID/stat, read once its wait was seen): a process
// that reads its input on a thread of its own (a Python program with a
// reader thread and a queue) is always blocked there, while its other
// threads may still be writing, so its wait tells nothing of whether it
// is done. Found in such a process, the reader makes the answer no at
// once (no error: -settle decides), whichever of its threads it is.
// Seen with one thread: python3 -i, sh, bash, busybox sh, sqlite3 and
// cat. Never answered yes: node (7 threads at its prompt), any Go
// program.
//
// Seen on Linux 6.18: python3 -i on pipes waits in read(0) (one byte at a
// time), on a terminal in pselect6 on descriptor 0 (readline); dash
// (sh -i) reads descriptor 0 on both; bash --norc -i waits in pselect6
// on both; busybox sh -i reads on pipes and polls on a terminal; cat
// reads.
//
// Where the syscall file may not be read (EACCES, EPERM: ptrace's attach
// mode denied, as under Yama's ptrace_scope 3, while read mode is
// granted), the thread's wchan is the fallback, with a looser rule, since
// it names what the thread sleeps in, not on which descriptor: a function
// that reads the input's kind of file (seen: anon_pipe_read for a pipe;
// wait_woken, which n_tty_read sleeps in, for a terminal; older kernels:
// pipe_read, pipe_wait, n_tty_read) or that waits on a set
// (poll_schedule_timeout, seen for select and poll; do_select,
// do_sys_poll, ep_poll, do_epoll_wait), with descriptor 0 the input.
// Python reading another pipe than its stdin passes it. That is no looser
// than -settle, which ends a turn after any 20 ms of quiet.
//
// Not blocked, and no error: a thread that runs or sleeps in anything
// else; a reader in a process of more than one thread; a group whose
// leader has exited, or is a zombie; a reader outside the group, or below
// a process of another group; a reader of /dev/tty (its link is not the
// slave's); a process that is not asleep when the kernel's wchan says
// "0".
//
// The error wraps ErrCannotSee, and the answer is unknown, when no reader
// was found and some process could not be seen: its syscall file and its
// descriptors denied to this agent; a leader that /proc hides (hidepid)
// while it runs; an executable of an ABI this agent does not read.
// NewProbe fails with it when /proc is another PID namespace's.
//
// # Guarantees
//
//   - It only reads /proc, and sends signal 0 to a leader /proc does not
//     show: it never attaches to, stops or signals a process.
//   - Every descriptor it opens has O_CLOEXEC and is closed before the
//     call returns. It does not open through internal/procfs's reserve: a
//     probe that cannot open (EMFILE) says so, and the conversation waits
//     -settle.
//   - A probe allocates nothing (errors aside) and costs a few system
//     calls: on Linux 6.18, amd64, 2 cores, go test -bench: 7.4 µs for
//     python3 blocked on pipes (its syscall file and two links), 9.9 µs
//     on a terminal (and its select set), 13.7 µs when it is not blocked
//     (every thread, the children); as 386, 9 to 23 µs. Counting the
//     reader's threads (one statx) added about 0.6 µs to a yes, measured
//     side by side with the probe before it (6.7 against 7.3 µs on
//     pipes, on a busy machine); a no costs what it did.
//   - An answer is a snapshot: what was true while it looked.
//
// # What the caller does
//
//   - One probe per child start, made with a descriptor of the child's
//     input: the agent's write end of its stdin pipe, or the terminal's
//     slave before the agent closes its copy. A restarted child has
//     another pipe or terminal, and needs its own probe.
//   - Blocked is given the child's pid on pipes (it leads its own group),
//     and with a terminal the foreground group read just before it
//     (tty.Foreground on the master), since a shell hands the terminal to
//     each job it runs.
//   - It probes only when the child's output ends in a line that looks
//     like a prompt, after the echo of the input: on a terminal the echo
//     comes before the reader wakes, so a probe on the echo alone could
//     see the reader still asleep from before the input. (On pipes the
//     write to the child wakes its reader before it returns.)
//   - While the answer is no, it probes again on NextProbe's schedule
//     until -settle has passed; an error wrapping ErrCannotSee is logged
//     once per child, and -settle decides.
//   - A Probe is used by one goroutine at a time: its buffers are reused.
//
// # A speed trick, with an off switch
//
// The probe changes when a turn ends, never what its answer is: it saves
// the -settle wait (20 ms by default) on every turn. FIFOBRIDGE_READ_PROBE=0
// (OffEnv), read once at start, turns it off: NewProbe fails with ErrOff,
// and every prompt waits -settle, as where the agent cannot see. The
// benchmarks of this package measure a probe's cost and how soon after its
// prompt a REPL is seen waiting; bench/cmd/fifobench's ask part measures
// turns (docs/bench.md).
//
// It does not wait for anything itself, and does not decide when a turn
// ends: the turn tracker does.
package readwait
