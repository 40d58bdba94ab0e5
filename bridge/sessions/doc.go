//go:build linux

// Package sessions is the agent's table of stream children: the one owner
// of every stream child, in stream mode and in sessions mode. Each entry,
// a session, is a stream.Engine of its own (terminal, conversation,
// transcript, restart, containment, last words) with its FIFOs, found by
// its name. Stream mode is the table with one entry, the empty name,
// opened at start from the empty open line on DIR's own FIFOs (DIR/in,
// DIR/out, DIR/ask with a prompt, DIR/winsize with a terminal), which are
// the agent's: it made them, follows them and removes them. Its control
// FIFO, DIR/control (Config.Control, also the agent's), takes the control
// lines that act on that one child (signal, watch, eof), naming no
// session, served by the same control-line code as sessions mode's
// DIR/in. Sessions mode starts with none: named sessions are opened,
// signaled, watched, listed and closed by control lines on DIR/in,
// answered on each line's own reply FIFO as exec mode answers requests
// (a watch's reply FIFO is handed to the entry's engine, which writes
// its frames until the watch ends: see stream.Engine.Watch), each on its
// own FIFOs in DIR/sessions/NAME/, a directory made with its files in
// one call and removed in one call (a sharedir.Unit, which holds no
// descriptor while idle), and followed as DIR's own FIFOs are. A line
// that its FIFO does not take (another op on DIR/control, or one that
// names a session there; one that names none on DIR/in for an op on a
// session) gets one error frame.
//
// Ownership:
//
//   - Opening (open.go, start) is one path for both modes: the entry's
//     settings come from its open line (config.Run.Entry), its files are
//     wired (a session's made, stream mode's the agent's), its engine made
//     and inserted in the table, and one goroutine started, runSession,
//     which runs the engine until it returns and then ends the entry. The
//     table's Run waits for every such goroutine.
//   - An entry ends when its engine's Run returns: a close line (its
//     context cancelled), its child ending for good (after its last
//     words), its idle timeout (-session-idle; stream mode's -idle-timeout),
//     or the table's stop. runSession then removes a session's files,
//     takes its name out of the table and closes done; stream mode's entry
//     stays listed, and its end is the table's: Run returns its status.
//   - What waits on an entry waits for its events, never polls: the
//     engine's Ready (an open's answer) and the entry's done (a close's
//     answer), each in a goroutine the table owns and waits for.
//   - The table's own goroutines, one of each for the whole table, are
//     started by Run and waited for before it returns: the loop that
//     forwards the agent's signals to every entry (signal.go), the sweep
//     of DIR/replies for every entry's asks and every control line's
//     answer, and in sessions mode the control loop (control.go). An
//     idle entry has no goroutine that wakes: none runs a timer for it
//     but its idle timeout, when one is set.
//
// Guarantees:
//
//   - The table owns every entry's goroutines, descriptors, processes and
//     cgroup: a session is gone once its stream.Engine's Run returned (its
//     goroutines and its child's tree are gone then), its FIFO ends were
//     closed, and its files and directory were removed. Nothing of a
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
//     every entry without waiting for any.
//   - The control loop never waits for a reply reader: error frames and
//     small answers are written at once or dropped (answer.WriteNow), and
//     answers that wait (an open for its child, a close for its tree, a
//     long list) are written by goroutines of the table's under the
//     give-up rule of package bound. How many wait is bounded (maxWaiting).
//   - Nothing is made outside DIR/sessions, and an entry there the agent
//     did not make (a link, a file, another user's directory) is refused
//     and left alone. A directory of the agent's own user there with no
//     session open is a leftover of an earlier agent: it is emptied of the
//     files a session has and removed (at start), or reused (at an open).
//     A session's directory is reached only while it is the one its open
//     made (sharedir.ErrMoved otherwise).
//   - A session's in and out are followed, as its ask is (package
//     follow): a FIFO put in place of one is served, the output waiting
//     in an old out carried over, and with -create a missing one is made
//     again; the follower is stopped before the session's files go.
//   - At the agent's stop every entry is closed, in parallel; Run returns
//     once all are gone.
//
// What it does not do: in sessions mode it writes nothing to DIR/out (a
// line that names no usable reply FIFO is answered in the log alone),
// and it follows a session's in and out (files.go) but not stream mode's,
// which the agent follows. Exec mode is not a table of stream children:
// it is its own engine (package execmode).
package sessions
