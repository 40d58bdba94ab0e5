//go:build linux

// Package status is the agent's status file, DIR/status.json, and the health
// check that reads it.
//
// Guarantees:
//
//   - A reader sees the old content of the file or the new, never a part:
//     the file is replaced atomically.
//   - The JSON form of Status is part of the external contract; fields are
//     only ever added.
//   - The file, its temporary file and DIR/lock are reached only through a
//     descriptor of their directory, never following a symbolic link: a
//     link at status.json is replaced, not written through.
//   - The status file and DIR/lock get mode FileMode(-perm): whoever -perm
//     lets use the FIFOs may read both (0640 for the default 0660, 0644 for
//     0666), the agent's user may write them.
//   - Read, Check and AgentAlive need only permission to enter DIR and read
//     the two files, never to list DIR, nor to be root. ReadAt and
//     AgentAliveAt do the same through a DIR a client entered once.
//   - ReadOwnedAt reads the file only when the agent's user wrote it: a
//     regular file of that user that nobody else may write, checked on
//     the descriptor read. Status.Inputs, which it then holds, names the
//     input FIFOs the agent serves.
//   - A read costs a client about the same however many sessions are
//     open: ReadAt, ReadOwnedAt and Read decode every field but the
//     sessions, which they keep as written (SessionsJSON, skimmed by
//     package jsonskim) for Session to decode the one asked for;
//     ReadHeadAt and ReadOwnedHeadAt read the file only up to its
//     "sessions", which the agent writes last. The agent encodes a
//     session's part once per change of it (the writer of SessionsJSON),
//     and replaces the file by an exchange where it can (WriteAt).
//   - Lock holds an exclusive flock on DIR/lock while the agent runs;
//     AgentAlive tells from any PID namespace whether one does. The shared
//     lock it takes to ask lasts microseconds, and Lock tries again for
//     probeGrace, so that asking never makes an agent that starts fail.
//   - Check applies one rule to the entry it is asked about, stream
//     mode's child or a session: a child in a crash loop is unhealthy,
//     whether it runs or waits to restart. The agent decides that
//     (child.Supervisor) and writes its verdict, ChildStatus.CrashLoop;
//     Check reads it and judges no runs itself.
package status
