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
//   - Lock holds an exclusive flock on DIR/lock while the agent runs;
//     AgentAlive tells from any PID namespace whether one does.
package status
