//go:build linux

// Package bound holds the limits that every engine of the agent keeps
// alike, so that none keeps a copy that drifts: how long a write waits for
// a reader that takes nothing, when a stop gives every write up, and how
// many accepted requests or asks may wait in the agent. Exec mode and
// conversations both use it.
//
// The rule for a write that blocks (its FIFO is full), in the spirit of
// os/exec's WaitDelay:
//
//   - It waits for the reader to take something for at most the patience,
//     -stop-timeout but at least ReaderPatience (1 s); a reader that takes
//     nothing for that long is given up, the write under way and every
//     later one. A reader that takes a little at a time is never given up,
//     however slow: its writer, and through it a child, wait for it
//     (backpressure). This holds while the child that writes still runs
//     too: a reader that stays but never reads would otherwise hold that
//     child, and its slot, for good (issue 26, hole 4); the engine then
//     stops what the writes came from (exec mode cancels the request, a
//     conversation's turn is interrupted).
//   - When a stop begins, one deadline: -stop-timeout, when the children
//     still there get SIGKILL, plus StopGrace for their last frames to
//     reach a reader. From the deadline on every write still under way,
//     and every later one, is given up.
//
// How many wait: a Queue holds at most its limit, in arrival order; what
// the engine does with one more (wait, or refuse at once) is its own.
//
// Guarantees: nothing here starts a goroutine or opens a descriptor; a
// Writer's deadline is set under one lock, so that a stop arming it never
// races a write choosing its own.
package bound
