//go:build linux

// Package watch is the agent's one inotify instance. Every wait for a
// change of a file or a directory (the directory of a FIFO that is
// followed, DIR/winsize, a cgroup's cgroup.events) is a Watch on it, and
// one goroutine reads the events of all of them and hands each to the
// watches of its object.
//
// Guarantees:
//
//   - One inotify descriptor and one reader goroutine for the whole
//     process, made by the first Add (or Start: the agent calls it first
//     thing, so that a killed agent's other files are let go of before
//     this one) and kept for the process's life, as the runtime's poller
//     keeps its own: closing an inotify instance makes the kernel wait
//     for a grace period, tens of milliseconds that would fall on
//     whatever closed it (a session's close, a stop). Removing a watch
//     costs no such wait.
//   - Nothing polls and no timer runs: the reader sleeps in the runtime's
//     poller until the kernel has an event. An idle agent with any number
//     of watches takes no CPU here.
//   - A watch's func is called on the reader goroutine, one event at a
//     time, and never once Remove has returned. It must not block and must
//     not call into this package: it hands the work on (Runner.Kick, a
//     channel with room).
//   - Watches of one object (one inode, by whatever path it was added)
//     share the kernel's watch, whose mask is the union of theirs; it is
//     removed with the last of them. Each watch is told only the events of
//     its own mask, and every watch is told of what may concern anyone: a
//     queue overflow (IN_Q_OVERFLOW: events were lost, look again at
//     everything) and the end of its object's watch (IN_IGNORED: the
//     object was deleted or its file system unmounted; no event follows).
//   - Every descriptor opened here has O_CLOEXEC.
//
// What it does not do: it resolves no path beyond what inotify_add_watch
// does with the one it is given, following links. Callers that watch in a
// directory others may write give /proc/self/fd/N of a descriptor they
// opened safely (package sharedir), which names what was opened and
// nothing that was put at its path since. Where inotify cannot be had (no
// instance or watch left under the user's limits, a seccomp filter, no
// /proc), Add fails and the caller looks now and then instead, as each
// caller's doc says.
package watch
