// Package fifo makes, checks, waits for and opens Linux named pipes.
//
// Guarantees:
//
//   - Every descriptor opened here has O_CLOEXEC, so no FIFO leaks into a
//     child process.
//   - A Dir is a directory opened once (OpenDir resolves its path then,
//     following a symbolic link only where root or the caller alone could
//     have made it). Every operation on an entry of a Dir goes through its
//     descriptor and never follows a symbolic link: openat2 with
//     RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH (openat with O_NOFOLLOW before
//     Linux 5.6), fstatat with AT_SYMLINK_NOFOLLOW, mkfifoat, mkdirat,
//     unlinkat, renameat, and modes set on the entry's own descriptor, never
//     by path. Whoever else can write the directory cannot make an
//     operation act outside it; a link where a FIFO, directory or file is
//     expected is refused (ErrSymlink, ErrNotFIFO) and left untouched.
//   - EnterDir and EnterSub open a directory with O_PATH: they need only
//     permission to enter it, not to list it, and everything done with a
//     named entry works through them. A client of a 1733 replies/ needs
//     nothing more.
//   - The functions that take a path (Make, Check, OpenWriterNow, ...) do
//     the same in the path's directory, entered for the call.
//   - RemoveUnread removes only a FIFO that nobody reads and that is older
//     than a cut-off, and only while its name still names it.
//   - A Reply is written only while its name still names the FIFO first
//     opened, with no other name.
//   - A path that exists but is not a FIFO is reported as ErrNotFIFO and is
//     never removed, truncated or written.
//   - No open here blocks: opens are O_NONBLOCK. Wait, which sleeps on
//     inotify (fsnotify) until a FIFO appears, takes a context, and closes
//     its watcher, whose Close waits for the watcher's goroutine.
//   - Dir.Watch watches a Dir through its descriptor, never a path; an
//     event only says when to look again through the Dir.
//   - Source and Sink are the agent's long-lived ends of the input and output
//     FIFOs. Both are opened O_RDWR, so a Source never reads EOF when writers
//     come and go (and never spins), and a Sink never gets EPIPE when readers
//     come and go: bytes written while nobody reads wait in the pipe buffer,
//     and once it is full, Write waits (backpressure). Both follow their
//     entry, through its directory's descriptor: after Reopen, bytes still
//     buffered in the replaced FIFO are carried over.
package fifo
