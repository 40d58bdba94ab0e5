//go:build linux

// Package tty is what the agent does with terminals itself: it opens
// pseudo-terminal pairs for terminal children and sets their window size,
// reads which process group a child's terminal has in the foreground
// (Foreground, from the master) and its EOF character (EOFChar), and it
// writes to a terminal it shares
// with a child.
//
// Guarantees:
//
//   - Both ends of a pseudo-terminal are opened O_CLOEXEC and O_NOCTTY;
//     the master is non-blocking. The slave is its master's own
//     (TIOCGPTPEER), also where /dev/pts is another devpts instance.
//   - Writes through Output, and whatever runs in WithoutTTOU, are made
//     with SIGTTOU blocked on the calling thread only, and only while they
//     run: with TOSTOP set and a child in the foreground they go through
//     at once instead of being restarted after every SIGTTOU the agent
//     catches.
//
// It does not start children on a terminal: child.Spec.Ctty does, and
// child.Terminal hands the agent's own controlling terminal to a child's
// process group and back.
package tty
