//go:build linux

// Package sessions is sessions mode: any number of named stream children,
// each opened, signaled and closed by a control line on DIR/in and
// answered on the line's own reply FIFO, as exec mode answers requests.
//
// A session is a stream.Engine of its own (terminal, conversation,
// transcript, restart, containment, last words) on its own FIFOs in
// DIR/sessions/NAME/: in and out, ask with a prompt, the regular file
// winsize with a terminal, all made through descriptors.
//
// Guarantees:
//
//   - The engine owns every session's goroutines, descriptors, processes
//     and cgroup: a session is gone once its stream.Engine's Run returned
//     (its goroutines and its child's tree are gone then), its FIFO ends
//     were closed, and its files and directory were removed. Nothing of a
//     closed session stays in the agent.
//   - An open is answered once the session's child runs and is past the
//     start of its first run: seen waiting for its input, or running for
//     config.SessionFirstRun (with a prompt: once it is ready). A first run
//     that ends with 127 or 126 within it, or with a prompt before it was
//     ever ready, as `env PROG` does with no PROG, leaves no session (no
//     restart, no slot held), and an open not answered yet fails with
//     that code, quoting the child's last line (stream.Config.FirstRun).
//   - A session ends only by a close line, by its child ending for good
//     (after its last words, see package stream), by -session-idle, or with
//     the agent. Nothing one session, or a reader, writer or asker of its
//     FIFOs, does ends or slows another; signals the agent forwards reach
//     every session without waiting for any.
//   - The control loop never waits for a reply reader: error frames and
//     small answers are written at once or dropped (answer.WriteNow), and
//     answers that wait (an open for its child, a close for its tree, a
//     long list) are written by goroutines of the engine's under the give-up
//     rule of package bound. How many wait is bounded (maxWaiting).
//   - Nothing is made outside DIR/sessions, and an entry there the agent
//     did not make (a link, a file, another user's directory) is refused
//     and left alone. A directory of the agent's own user there with no
//     session open is a leftover of an earlier agent: it is emptied of the
//     files a session has and removed (at start), or reused (at an open).
//   - At the agent's stop every session is closed, in parallel; Run returns
//     once all are gone.
//
// What it does not do: it writes nothing to DIR/out (a line that names no
// usable reply FIFO is answered in the log alone), and it does not follow
// a session's FIFOs when they are replaced: only the agent's user may
// change a session's directory.
package sessions
