//go:build linux

// Package conversation is the conversation of `fifobridge run -prompt`:
// it follows a stream child's turns with a turn.Tracker fed every byte the
// child writes, reads asks from DIR/ask, serves them one at a time in
// arrival order, each once the child is ready, and answers each on its own
// reply FIFO. The stream engine (package stream) owns the child and wires
// it in through a small interface: the child's output in (Output,
// OutputEnded), a turn's input out (Child.WriteTurn), an interrupt
// (Child.Interrupt, or ^C typed on a terminal), the child's start and
// end (Started, Exited), and how to see it wait for input (Reading). The
// output FIFO becomes the child's transcript.
//
// Guarantees:
//
//   - The child is ready when the tracker takes its prompt: after -settle
//     of quiet (Config.Settle), or as soon as its Reader sees the reader of
//     its input blocked reading it, once the line looks like the prompt
//     (a reader of one thread: package readwait says no for a reader
//     with other threads, which may still write). A Reader's yes counts
//     only when no output, typed input or turn reached the tracker while
//     it was asked, and never while the child's output is held up for an
//     asker. Where a Reader cannot tell (an error
//     wrapping readwait.ErrCannotSee, logged once per child), or the child
//     has none, -settle decides.
//   - Nothing of a turn waits for a newline: its last line, when it is not
//     the prompt (the question of a command that waits), reaches the
//     asker after -settle of quiet, or once a Reader sees the reader of
//     the child's input blocked (asked from readwait.FirstWait after the
//     line came), or when input is typed (Typed); the turn goes on, and
//     the prompt that later ends the line is matched against all of it
//     (package turn).
//   - DIR/ask is followed from Start (package follow), also when it
//     cannot be opened then (removed since the agent made it): its
//     reader waits for the FIFO the follower serves there, made again
//     with Config.Create once missing for a second. The follower waits
//     on the directory's events, so an idle conversation runs no timer.
//   - An ask gets only its own turn's answer. A turn that is interrupted
//     (past its time limit, its asker gone or not reading) has its child
//     interrupted, and the next turn starts only once the child is ready
//     again, however long that takes: nothing of the interrupted turn ever
//     reaches a later answer.
//   - A turn ends at the child's prompt, its end frame carrying the
//     prompt's named groups and, when the group "status" shows digits,
//     that status; at its continuation prompt after the whole input
//     (Config.Continuation), as incomplete, the child then interrupted as
//     on a timeout; past its limit; or with the child. An ask past its
//     limit while the child has not been ready since it started, or since
//     the turn before was interrupted, is told so in its end frame, with
//     the prompt expression and the child's last line; after an
//     incomplete turn, until the child is ready again, also with that
//     turn's input (which the status file never holds) and fifobridge
//     type as the way to finish it.
//   - A turn's input is written whole to the child, never in the middle of
//     a chunk moved from the input FIFO; on a terminal, the ^C of an
//     interrupt is typed after the input before it.
//   - Every ask accepted gets exactly one last frame: end, exit (its child
//     ended during the turn) or error (refused, the child ended for good,
//     the agent stops), unless its asker went away or stopped reading.
//   - At most MaxQueued asks wait; one more is refused at once with an
//     error frame. A waiting ask holds none of the agent's descriptors or
//     goroutines: only its parsed request. Its reply FIFO is opened when
//     its turn starts; an ask whose asker went away by then (nobody reads
//     the FIFO, or it is gone) is dropped, and the child never sees it.
//     A waiting ask past its time limit gets its end frame (timed out,
//     queued) without a turn: nothing of it is written to the child, no
//     turn is interrupted for it, and the log says why it waited.
//   - One asker at a time: only the turn in progress, or the one just
//     ended while its last frames are written, has its reply FIFO open, a
//     writer and a watch (two goroutines). At most maxHeld (1 MiB) of its
//     frames wait in the agent: beyond that, its child's output is no
//     longer read (the child waits, as a stream child waits for the reader
//     of the output FIFO), and the time it waits does not count as quiet.
//   - Writes to an asker follow the rule of package bound: an asker that
//     takes nothing for the patience (-stop-timeout, at least 1 s) loses
//     its turn (interrupted as on a timeout), and the next one is served;
//     at a stop, writes are given up at the stop's deadline.
//   - The transcript never holds the child back: what the output FIFO's
//     reader does not take is dropped and counted.
//   - Every goroutine started here is waited for by Wait, and every
//     descriptor opened here is closed by then.
//
// What it does not do: it starts, signals and restarts no child and owns
// none of its pipes or terminals (package stream does); it does not read
// the input FIFO, whose bytes go to the child as they come (Typed says
// they did); it never holds the transcript's bytes back for a reader; it
// does not list DIR/replies (it opens only names asks give) nor sweep it
// (the table of stream children does, once for all, package sessions);
// and it does not decide the idle timeout (Busy says whether an ask
// waits or is in its turn).
package conversation
