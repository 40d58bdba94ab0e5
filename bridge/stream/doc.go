//go:build linux

// Package stream is one stream child, stream mode's or a session's: one
// long-lived supervised child, on pipes or (-tty) a fresh pseudo-terminal
// per start, wired to its input and output FIFOs; with -prompt, wired to
// a conversation (package conversation) through a small interface
// (converse.go): its output in, a turn's input out, an interrupt, its
// start and its end, and a Reader that sees it wait for input (reader.go:
// a probe of package readwait, made per start from its stdin pipe or its
// terminal's slave, and off with FIFOBRIDGE_READ_PROBE=0). Its owner is
// the table of stream children (package sessions), which runs it, waits
// for its events (events.go: Ready, a channel the engine closes) and its
// end (Run returning), and forwards the agent's signals to it (Forward).
//
// Guarantees:
//
//   - Bytes written to the input FIFO reach the child's stdin byte for byte,
//     and the child's stdout reaches the output FIFO byte for byte; stderr is
//     the agent's own, or with -stderr out the same pipe as stdout. (A
//     session's first child on pipes writes its stderr to a pipe that the
//     agent copies to its own stderr byte for byte; once the child's
//     tree is gone, what the agent's stderr does not take within the
//     give-up rule's patience (package bound) is dropped and its size
//     logged: see stderrcopy.go.)
//   - Writers of the input FIFO coming and going never give the child EOF.
//     Only EndInput ends its input (endinput.go): once the bytes the input
//     FIFO held were moved on, the agent's end of its stdin is closed (it
//     stays ended until the child exits; the next child gets a fresh
//     stdin), or on a terminal the EOF character is typed.
//   - Output waits for a reader (backpressure); nothing is dropped while
//     a child runs. With -prompt the output FIFO is a transcript that never
//     waits (what no reader takes is dropped), and the child's output waits
//     for the asker of the turn in progress instead, as the conversation
//     says. A last child's output (its last words) waits for a
//     reader for up to -stop-timeout; at a stop, or with the -tee copy
//     (the log has the words), it gets flushGrace to reach the output
//     FIFO and nothing waits for a reader.
//   - With -tee every byte of the output is offered to the copy on the
//     agent's stdout, the last ones drained at the end included.
//   - Every byte of the output from a watch's start on is offered to the
//     watch (watch.go), which never waits: each watcher holds at most
//     watchHeld (1 MiB) and drops and counts the rest, so that no watcher
//     slows the child, the output FIFO, an asker or another watcher. On
//     pipes the output is spliced to the output FIFO, never through the
//     agent's memory, while no watch (nor the first run's judge) wants
//     it; a watch makes the copy read it into the agent until the last
//     watch ends. A watch ends with the child it began with (an exit
//     frame), or with the engine (a closed frame); its writer and the
//     watch on its reader are the engine's goroutines, waited for by Run.
//   - Input read from the FIFO but not consumed by a child that ended, even
//     bytes left in its stdin pipe, goes to the next child.
//   - Every goroutine started here is waited for before Run returns, and
//     every descriptor opened here is closed. (One exception: the copy of
//     a first child's stderr is waited for at most the patience, and a
//     write to the agent's stderr that blocks past it, though poll(2)
//     said it had room, ends on its own.)
//   - With Config.FirstRun (sessions), a first run that ends with 127 or
//     126 within FirstRun of its start, or with a conversation before the
//     child was ever ready, is a failed start: no restart, and Run's
//     error quotes the child's last line (firstrun.go). Its output and
//     its stderr are watched for that line until it is past that, and
//     no longer.
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
// What it does not do: it reads no signal of the agent's (its owner calls
// Forward), and it knows of no other stream child.
package stream
