// Package status is the agent's status file, DIR/status.json, and the health
// check that reads it.
//
// Guarantees:
//
//   - A reader sees the old content of the file or the new, never a part:
//     the file is replaced atomically.
//   - The JSON form of Status is part of the external contract; fields are
//     only ever added.
package status
