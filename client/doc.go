//go:build linux

// Package client is what `fifobridge send`, `ask`, `open`, `close`,
// `ls`, `type`, `signal` and `watch` do: Send sends one exec-mode request to an
// agent and relays the request's output and exit; Ask asks a conversation
// one turn, DIR's own or a session's (AskOptions.Session). An Asker
// (OpenAsker) asks a conversation many turns with its FIFOs kept open:
// what a program that talks to a REPL all day uses instead of one Ask per
// turn. Sessions opens, closes (one by one, or all) and lists the
// sessions of an agent in sessions mode. Type types into a child's input
// and Signal signals it, and Watch follows its output from now on: stream
// mode's child, or a session's.
//
// Guarantees:
//
//   - Open, Close and List are Send's machinery with another line: one
//     control line (protocol.Control) written into DIR/in by Send's rules
//     (the served check, the lock rule, the give-up and the reply FIFO
//     removed on every way out), answered on a private reply FIFO. They
//     write nothing unless the status file says a live agent serves DIR in
//     sessions mode (in exec mode DIR/in would take the line as a request,
//     in stream mode as the child's input), nor for a session name that
//     could name no session. Send, and Ask without a session, to an agent
//     in sessions mode write nothing.
//   - Signal and Type's end of input are control lines too, by the same
//     machinery: on sessions mode's DIR/in, naming the session, or on
//     stream mode's control FIFO DIR/control, each only when the status
//     file says a live agent serves DIR in that mode, and only into the
//     FIFO it names under that name. Type writes its text into the input
//     FIFO the status file names as the child's "in" (DIR/in, or
//     sessions[NAME].inputs.in), by the served and key checks of Send; a
//     write cut short by its context is not finished (typed text is not
//     a line: nothing is added to it), and says how much went.
//   - An Ask of a session enters DIR/sessions and DIR/sessions/NAME from
//     DIR's descriptor (no symbolic link followed, one there refused and
//     left alone) and writes only into the ask FIFO the status file names
//     for that session (sessions[NAME].inputs.ask); a session the file
//     does not list is not open, whoever made its directory.
//   - Send never blocks forever on an open or a write: an absent agent is
//     ErrNoAgent at once, and every wait ends with its context.
//   - Send, Ask and an Asker's turns end when their context does,
//     whatever Stdout and Stderr do. Their writes to them (and the calls of Warn) run one at a time,
//     in frame order, on a goroutine of the relay; a write that blocks (a
//     stdout nobody reads) is abandoned when the context ends: the reply
//     FIFO is removed, the request cancelled (Send) or the turn given up
//     (Ask), and ctx's error returned at once. That write is left to end
//     by itself (the caller owns the writer: closing what it writes to
//     ends it); nothing is written after it. While a write blocks, no more
//     of the reply FIFO is read: one frame is held, and the agent waits.
//   - Send works for any user the directory admits, root or not: it only
//     enters DIR and DIR/replies (O_PATH descriptors, see sharedir.Enter),
//     never lists them, and reads DIR/status.json and DIR/lock through
//     DIR's descriptor. Whoever may enter DIR, write DIR/in and create
//     files in replies/ may send.
//   - Send and Ask resolve DIR once: they enter it at their start and do
//     everything else (the input FIFO, replies/, the status file, the
//     lock, the cancel line) relative to that descriptor, however long the
//     request waits; an Asker enters it once for its whole life.
//     WaitServing and WaitAsking, which wait for a DIR that may not exist
//     yet, resolve it afresh on each look.
//   - An Asker keeps one private reply FIFO, made as Send's is, and
//     DIR/ask open from OpenAsker to Close, and takes one turn at a time.
//     A turn that does not end with its last frame gives the FIFO up (the
//     agent interrupts the turn, or drops the ask that still waits for
//     it, which Result.Queued then says) and the next turn makes a new
//     one; Close
//     removes it. Between turns it holds a fixed set of descriptors and,
//     but for a write to Stdout abandoned as below, no goroutine; the
//     next turn writes nothing before that write has returned.
//   - The private reply FIFO Send makes is removed on every way out Send
//     lives to see (the agent sweeps away what a SIGKILLed one leaves).
//     Its name is 128 random bits; the request always carries an id, and
//     only frames with that id are taken, others are reported and ignored.
//     It has mode 0600 when the agent (the owner of replies/) is root or
//     the sender's own user, else 0622, so that an agent of another user
//     can write to it; its name is then the only key to it, and Send
//     writes it nowhere another user could read it (see replyKey): it
//     refuses, writing nothing, when the input FIFO may be read by users
//     other than the agent's, or replies/ may not be the agent's.
//   - Send and Ask write a request only into the FIFO the agent serves
//     under the name written to (DIR/in, DIR/ask): the agent's status
//     file, written by the agent's user alone, names it by inode, and it
//     is compared on the descriptor written to (see openInput). They wait
//     up to servedPatience for it, then refuse, writing nothing. Where
//     others may make entries in DIR, the FIFO must also be the agent's
//     user's and unreadable by others, whoever the agent is.
//   - Options.Args are the request's args, in order, as given.
//   - The request is written as "\n" + line: an unterminated fragment an
//     earlier writer left in the input FIFO ends there instead of
//     swallowing the request. A write of at most PIPE_BUF bytes takes no
//     lock (the kernel makes it atomic); a larger one is sealed and padded
//     to whole pieces of PIPE_BUF bytes (protocol.WireLine), which Linux
//     splits only between pieces, and waits at most LockPatience for the
//     exclusive flock on the input FIFO. A writer who ignores the lock and
//     puts bytes between two pieces gets the line refused, neither run
//     with its own reply or text nor leaking a piece: the agent removes
//     the reply FIFO the line's first piece names, and Send and Ask end
//     at once with ErrUnanswerable.
//   - An agent that is stopping is not an agent that died: a request it
//     runs still gets its frames, and Send relays them to the exit frame.
//     Send reports the agent gone (ErrAgentGone) only when the agent closed
//     the reply FIFO without an exit frame, or, while the request still
//     waits to be read, when no live agent serves the directory.
package client
