//go:build linux

// Package execmode is exec mode: one child per NDJSON request line read
// from the input FIFO, its frames on the request's reply FIFO or the
// output FIFO (see protocol for the wire format).
//
// Guarantees:
//
//   - Every accepted request ends with exactly one exit frame; a rejected
//     one gets one error frame, unless nobody could read it (its reply FIFO
//     is full, or nobody reads the output FIFO): then it is dropped and
//     logged.
//   - A request's time limit runs from its child's start; its slot is held
//     while its tree lives, not while its frames wait for a reader.
//   - A reader that takes nothing holds a request at most the patience:
//     -stop-timeout, at least 1 s (bound.Rule). A request whose frames
//     wait that long for its reply FIFO's reader, or for the output
//     FIFO, running or not, is given up: canceled (its tree gets the
//     stop sequence, its slot is freed), the rest of its frames dropped,
//     logged once. A reader that takes a little at a time holds the
//     child back (backpressure), however slow. So readers that stay but
//     never read cannot take every slot and stop the agent from reading
//     its input FIFO (issue 26, hole 4). A frame already half in the
//     output FIFO is finished, not cut (that would garble the frames
//     after it): it waits for a reader, or the stop's deadline.
//   - No reader, however slow, holds up the request loop or another
//     request: each request's frames have a writer of their own, reply
//     FIFOs are never waited for by the loop, and error frames for the
//     output FIFO wait in a queue bounded in bytes, which pushes back on the
//     loop only while a reader takes them.
//   - A stop returns within -stop-timeout + bound.StopGrace (0.25 s) and
//     the time to tidy up, when every child dies at SIGKILL: one deadline,
//     kept by the rule conversations keep too (package bound), ends every
//     write still under way then (output FIFO, reply FIFOs, rejection
//     queue); a child SIGKILL has not ended halfway to it gets its exit
//     frame then.
//   - A request line that may hold another writer's bytes
//     (protocol.ErrDamaged) is answered on no reply FIFO: the reply FIFO
//     its first, atomic piece names is removed, so that its sender learns
//     at once, and the output FIFO gets an error frame under an id of the
//     agent's.
//   - A request is one object (request) that owns its child, pipes, reply
//     FIFO and goroutines; the dispatcher waits for it. A reply reader
//     leaving is seen at once, in the runtime's poller, not on a clock.
//   - Reply FIFOs left behind by a send that was killed are removed: at
//     start and every SweepPeriod, a FIFO in replies/ that no queued,
//     running or answered request holds, that nobody reads and that has not
//     changed for SweepAge goes; nothing else there is touched (see
//     answer.Sweep).
//   - PROGRAM was looked up once, at start (Config.Child.Path); a program
//     that cannot start then fails each request with one error frame.
//   - At most -max-concurrent requests wait in the agent for a slot, in
//     arrival order (a bound.Queue); lines behind them are read, so a {"cancel":"ID"} is
//     acted on at once: a queued request never starts (one error frame
//     "canceled"), a running one is stopped (its exit frame says
//     canceled), and an ID neither queued nor running gets one error frame.
package execmode
