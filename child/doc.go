//go:build linux

// Package child starts, signals, reaps, supervises and stops process trees
// for an agent that may run as PID 1. It holds process trees only: the
// agent's one-time set-up of its own process is internal/procinit's, its
// pseudo-terminals are internal/tty's, and the handler of the runtime's
// reserved signals is internal/sigreserved's.
//
// Guarantees:
//
//   - One goroutine of a Reaper calls wait4 for the whole process. It reaps
//     every process that ends up as a child (orphans included, as PID 1 or as
//     a child subreaper) and hands each started child's status to its
//     Process, even when the child exits before Start returns. Nothing else
//     in the program may call wait4, exec.Cmd.Wait or os.Process.Wait.
//   - A child starts with exactly the descriptors 0, 1 and 2 it is given,
//     once procinit.Start has made every inherited descriptor above 2
//     close-on-exec: Go opens everything else with O_CLOEXEC.
//   - A child runs in its own process group and gets SIGKILL when the agent
//     dies: it is forked from one goroutine locked to an OS thread that lives
//     as long as the Reaper, since PR_SET_PDEATHSIG fires when the forking
//     thread, not the process, exits.
//   - A child given a SignalState starts with its mask, whatever the
//     mask of the agent's threads is by then, and with its ignored set
//     ignored; a Ctty child less HUP, INT, QUIT, TSTP, TTIN and TTOU. One
//     given a Terminal the agent's group has gets the
//     terminal's foreground group before exec, and gives it back to the
//     agent's group before its Stop returns.
//   - The hand-back of the terminal is made with SIGTTOU blocked on the
//     calling thread (tty.WithoutTTOU): with TOSTOP set and a child in the
//     foreground it goes through at once.
//   - A child given a Ctty (tty.OpenPTY's slave) leads a new session with it
//     as its controlling terminal and as its descriptors 0, 1 and 2, with
//     HUP, INT, QUIT, TSTP, TTIN and TTOU neither blocked nor ignored.
//     Hangup reaches the processes left in that session once the child has
//     exited.
//   - Stop signals a child's whole tree (its process group, its descendants
//     and the orphans it left to the agent) once per process, each time
//     followed by SIGCONT so that a stopped process acts on it, waits, then
//     SIGKILLs what is left, and returns when none of it is running, or,
//     when something outlives SIGKILL by killPatience (uninterruptible
//     sleep), after a warning naming it. A child still running 2 s
//     (ignoreMark) after its stop signal, in a stop whose SIGKILL comes
//     later, is warned about once, naming the signal and -stop-signal.
//   - Nothing is signalled by a number that may have been reused: a child's
//     pid and its group's id only until the child is reaped (the reaper
//     holds the lock those signals take across wait4), anything else
//     through a pidfd checked against the start time a /proc scan saw.
//     A running child holds no descriptor of the agent's: its pid,
//     unreaped, names it.
//   - An orphan reparented to the agent whose owner cannot be told (see
//     tree_linux.go; with cgroups, one in no child's cgroup) is never
//     stopped while another child that could own it runs and is not being
//     stopped.
//   - With Spec.Cgroups (package cgroup), a child starts in a new cgroup
//     of its own, at clone time, so that everything it forks is in it; its
//     tree is what the cgroup holds, and what left the cgroup but is its
//     tree as without cgroups: members of its process group, descendants,
//     and orphans reparented to the agent (a grandchild that double-forked,
//     called setsid and moved to another cgroup), attributed as above. Stop
//     gives each of them the stop signal, then, at the timeout, cgroup.kill
//     and SIGKILL to those outside; it returns once the cgroup is empty,
//     nothing of the tree runs outside it and the cgroup is removed. An
//     orphan in a child's cgroup is that child's. No cgroup is left after a
//     failed start or after Stop. While it waits, a Stop holds one watch of
//     the cgroup's cgroup.events (or none, reading the file, when none can
//     be made), and scans /proc again only when the agent's children, the
//     children being stopped or the child's group changed (see
//     cgroupwait_linux.go).
//   - A fork bomb of a child cannot end the agent: where a pids controller
//     limits the agent, children get a pids budget below what it leaves
//     (Reaper.LimitPids on cgroup v1, every child's cgroup on v2), and
//     procinit.ReserveThreads made at start the idle threads the runtime
//     may need later. An agent out of descriptors
//     (EMFILE) still stops a tree: the files a stop opens come from a
//     reserve of descriptors when none is left (internal/procfs).
//   - LookPath asks the kernel as the child would: with a Credential, on a
//     thread that takes the child's ids for the check and is ended before
//     LookPath returns, so no other goroutine ever runs with them. The
//     kernel makes the agent not dumpable meanwhile; LookPath makes it
//     dumpable again once that thread is gone, if it was. A script's #!
//     interpreter is checked too, one level deep.
//   - A Supervisor's Snapshot says when its child is in a crash loop:
//     from the third run in a row that ended within Window, through the
//     backoffs, until the current child has run 10 s (or a whole Window,
//     when shorter); Changed is called when that ends by the child
//     running long enough.
package child
