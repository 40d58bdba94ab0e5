//go:build linux

// Package bridge is the agent of `fifobridge run`: it prepares DIR and the
// FIFOs (prepare.go), takes the lock and keeps the status file, sets up
// containment (containment.go), follows replaced FIFOs, and hands the FIFO
// ends to the engine of its mode: package sessions, the table of stream
// children (stream mode is its one entry on DIR's own FIFOs, sessions
// mode its named sessions; each a package stream engine, with package
// conversation wired in for -prompt), or package execmode. Whether the
// agent holds a conversation on DIR is decided once (converses). Pieces the engines share live under bridge/internal:
// answer (error frames, reply FIFOs that cannot be answered, the sweep of
// reply FIFOs left behind), bound (the one give-up rule for readers that
// do not read, and the bounded queue), follow and idle.
//
// Guarantees:
//
//   - Every FIFO the agent made is removed when Run returns, if it is still
//     there; every directory opened is closed, the lock last.
//   - Nothing is forwarded before a child exists: signals that arrive
//     while the FIFOs are prepared are dropped and logged.
//   - The status file says which containment is in force once it is
//     known, never a guess before.
//   - With -cgroup in force (see openContainment),
//     every child runs in a cgroup of its own, which is gone when its
//     stop returns, and every cgroup the agent made is gone when Run
//     returns.
package bridge
