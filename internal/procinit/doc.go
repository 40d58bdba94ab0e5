//go:build linux

// Package procinit is the agent's one-time process set-up: what
// `fifobridge run` does to its own process, once, before it serves. The
// children themselves are package child's.
//
// Guarantees:
//
//   - Start reads the signal state the agent inherited before anything in
//     the program changes it: the mask that stayed blocked, and the
//     knowable signals inherited as ignored (see Signals). That is what
//     children start with (child.SignalState), so that `nohup fifobridge
//     run` protects a child as it would without the agent.
//   - After Start, no descriptor the agent inherited reaches a child:
//     every one above 2 is close-on-exec, and a closed 0, 1 or 2 is
//     /dev/null, so that no later open lands there.
//   - After Start, the runtime's reserved signals do not end the agent
//     (package sigreserved).
//   - ReserveThreads makes, before any child starts, the idle threads the
//     runtime may need later, so that a child's fork bomb under a pids
//     limit cannot make the runtime abort the agent for want of one.
//   - LeaveWorkDir makes the agent's working directory "/", so that it pins
//     no mount.
//
// It does not make the agent a child subreaper: child.NewReaper does,
// since reaping what that brings is the Reaper's.
package procinit
