//go:build linux

// Package sigreserved keeps the realtime signals the Go runtime reserves,
// 32 and 34, from ending the agent: the runtime leaves them at their
// default action, which ends a process, and os/signal cannot register
// them, so one sent with kill(2) would end the agent.
//
// Guarantees, once Catch has run:
//
//   - 32 and 34 sent to the agent at any moment, during a fork too, neither
//     end it nor reach Go code.
//   - On amd64 and arm64 a handler of the package's own, in assembly,
//     catches them (a signal handler cannot be Go code, which needs the
//     goroutine's context that a signal may interrupt at any instruction),
//     so children start with them at their default, as execve resets a
//     caught signal. On the other architectures they are ignored, and so
//     ignored in children too.
//   - One the agent inherited as ignored, or that has a handler already (a
//     C library's, in a cgo build), is left as it is.
//
// It does not forward them to children: the agent drops them.
package sigreserved
