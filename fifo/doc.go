//go:build linux

// Package fifo makes, checks, waits for and opens Linux named pipes, in a
// directory reached through package sharedir.
//
// Guarantees:
//
//   - Every descriptor opened here has O_CLOEXEC, so no FIFO leaks into a
//     child process.
//   - Every operation on a FIFO goes through its directory's descriptor
//     (a *sharedir.Dir) and never follows a symbolic link: the FIFO is
//     pinned with an O_PATH descriptor and checked to be a FIFO before it
//     is opened, so every later open reaches that very inode. A link where
//     a FIFO is expected is refused (sharedir.ErrSymlink), and so is
//     anything else (ErrNotFIFO); neither is removed, truncated or written.
//   - MakeAt sets a new FIFO's mode with a chmod of its own descriptor,
//     never by path, whatever the umask.
//   - The functions that take a path (Check, OpenWriterNow) do
//     the same in the path's directory, entered for the call.
//   - RemoveUnreadAt removes only a FIFO that nobody reads and that is
//     older than a cut-off, and only while its name still names it.
//   - RemoveSameAt removes a FIFO only while its name still names the FIFO
//     the caller identified (IdentifyAt), never one put in its place.
//   - A Reply is written only while its name still names the FIFO first
//     opened, with no other name. No error of OpenReply or of a Reply
//     names it (Unnamed): a reply FIFO's name is its sender's secret.
//   - No open here blocks: opens are O_NONBLOCK. Wait, which sleeps on
//     inotify (fsnotify) until a FIFO appears, takes a context, and closes
//     its watcher, whose Close waits for the watcher's goroutine.
//   - Source and Sink are the agent's long-lived ends of the input and output
//     FIFOs. Both are opened O_RDWR, so a Source never reads EOF when writers
//     come and go (and never spins), and a Sink never gets EPIPE when readers
//     come and go: bytes written while nobody reads wait in the pipe buffer,
//     and once it is full, Write waits (backpressure). Both follow their
//     entry, through its directory's descriptor: after Reopen, bytes still
//     buffered in the replaced FIFO are carried over. Reopen serves a new
//     FIFO only once its caller's check accepted it, looked at on the very
//     descriptor that will be used (Stat tells what an end uses now).
//     An end keeps at most 16 replaced FIFOs open until they are emptied;
//     past that, Reopen serves no new FIFO until it has emptied them.
//   - A Source can start with no FIFO (PendingSourceAt: its entry was
//     missing when it was to be opened): its Read waits for the first FIFO
//     Reopen serves, so that the entry is followed from the start.
package fifo
