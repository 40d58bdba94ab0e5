// Package bridge connects the FIFOs of package fifo to children of package
// child: stream mode (one long-lived supervised child) and exec mode (one
// child per NDJSON request). It also keeps the status file.
//
// Guarantees of stream mode:
//
//   - Bytes written to the input FIFO reach the child's stdin byte for byte,
//     and the child's stdout reaches the output FIFO byte for byte; stderr is
//     the agent's own.
//   - Writers of the input FIFO coming and going never give the child EOF.
//   - Output waits for a reader (backpressure); nothing is dropped.
//   - Input read from the FIFO but not consumed by a child that ended, even
//     bytes left in its stdin pipe, goes to the next child.
//   - Every goroutine started here is waited for before Run returns, and
//     every descriptor opened here is closed.
//
// With Tty, each start gets a fresh pseudo-terminal instead of pipes:
//
//   - The agent holds only its master, from the start until the child's
//     tree is gone; then the master is closed, so nothing grows over
//     restarts.
//   - Input is written to the master as typed, and only while the child
//     runs; what was read and not taken goes to the next terminal. The
//     master's output reaches the output FIFO byte for byte, with the same
//     backpressure, until EIO (nobody has the terminal any more).
//   - DIR/winsize is read through DIR's descriptor, never through a link.
//
// Guarantees of exec mode:
//
//   - Every accepted request ends with exactly one exit frame; a rejected
//     one gets one error frame, unless nobody could read it (its reply FIFO
//     is full, or nobody reads the output FIFO): then it is dropped and
//     logged.
//   - A request's time limit runs from its child's start; its slot is held
//     while its tree lives, not while its frames wait for a reader.
//   - No reader, however slow, holds up the request loop or another
//     request: each request's frames have a writer of their own, reply
//     FIFOs are never waited for by the loop, and error frames for the
//     output FIFO wait in a queue bounded in bytes, which pushes back on the
//     loop only while a reader takes them.
//   - A stop returns within -stop-timeout + stopGrace (0.25 s) and the
//     time to tidy up, when every child dies at SIGKILL: one deadline, kept
//     by giveUp alone, ends every write still under way then (output FIFO,
//     reply FIFOs, rejection queue); a child SIGKILL has not ended halfway
//     to it gets its exit frame then. While serving, a finished request's
//     frames wait for a reader at most -stop-timeout (at least 1 s)
//     without progress.
//   - A request is one object (request) that owns its child, pipes, reply
//     FIFO and goroutines; the dispatcher waits for it. A reply reader
//     leaving is seen at once, in the runtime's poller, not on a clock.
//   - Reply FIFOs left behind by a send that was killed are removed: at
//     start and every SweepPeriod, a FIFO in replies/ that no queued,
//     running or answered request holds, that nobody reads and that has not
//     changed for SweepAge goes; nothing else there is touched (see
//     exec_sweep.go).
//   - PROGRAM was looked up once, at start (Config.ProgramPath); a program
//     that cannot start then fails each request with one error frame.
//   - At most -max-concurrent requests wait in the agent for a slot, in
//     arrival order; lines behind them are read, so a {"cancel":"ID"} is
//     acted on at once: a queued request never starts (one error frame
//     "canceled"), a running one is stopped (its exit frame says
//     canceled), and an ID neither queued nor running gets one error frame.
//
// Guarantees of both modes: with -cgroup in force (see openContainment),
// every child runs in a cgroup of its own, which is gone when its stop
// returns, and every cgroup the agent made is gone when Run returns.
package bridge
