//go:build linux

// Package sharedir reaches a directory that others may write (the shared
// FIFO directory, DIR/replies) through its descriptor alone: a Dir is
// opened once, and every operation on its entries takes a plain name and
// acts relative to that descriptor. It is the code of the contract's
// "Sharing the directory safely"; package fifo builds its FIFO operations
// on it, and status and client use it for their files.
//
// Guarantees:
//
//   - Every descriptor opened here has O_CLOEXEC.
//   - Open resolves a path once, from "/", one component at a time with
//     O_NOFOLLOW, following a symbolic link only where root or the caller
//     alone could have made it (so /var/run -> /run works, a link in /tmp
//     or in DIR does not: ErrSymlink).
//   - An operation on an entry of a Dir never follows a symbolic link:
//     openat2 with RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH (openat with
//     O_NOFOLLOW before Linux 5.6), fstatat with AT_SYMLINK_NOFOLLOW,
//     mkdirat, unlinkat, renameat; modes are set on the entry's own
//     descriptor, never by path. Whoever else can write the directory
//     cannot make an operation act outside it; a link where a directory or
//     file is expected is refused (ErrSymlink) and left untouched.
//   - A name is one path component: "", ".", ".." and anything with "/"
//     are refused (ErrBadName).
//   - Enter and EnterSub open a directory with O_PATH: they need only
//     permission to enter it, not to list it, and everything done with a
//     named entry works through them. A client of a 1733 replies/ needs
//     nothing more.
//   - A directory Make or MakeSub makes is private (0700) until it gets
//     its mode with fchmod on its own descriptor, whatever the umask; an
//     existing subdirectory MakeSub is given must belong to the caller.
//   - MakeUnit makes a directory with its files (FIFOs, empty regular
//     files) in one call, private until each has its mode (set on its own
//     descriptor) and the directory last; Unit.Remove and RemoveUnit
//     remove such a directory's files, each only while it is of its kind,
//     and then the directory, in one call; anything else there stays. A
//     unit's Dir holds no descriptor: each operation opens it through the
//     Dir it was made in, as an entry there (no link followed), and acts
//     only while it is the directory made (ErrMoved otherwise), so an
//     idle unit costs nothing but its name.
//   - EachName lists a directory a batch at a time, through a new
//     descriptor of it, never holding all its entries in memory.
//   - Watch (an fsnotify watcher of the caller's), Notify and NotifyEntry
//     (the agent's one inotify instance, package watch) watch a Dir, or
//     the file one of its entries is, through a descriptor, never a path;
//     an event only says when to look again through the Dir.
package sharedir
