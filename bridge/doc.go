// Package bridge connects the FIFOs of package fifo to children of package
// child: stream mode (one long-lived supervised child) and exec mode (one
// child per NDJSON request). It also keeps the status file.
//
// Guarantees of stream mode:
//
//   - Bytes written to the input FIFO reach the child's stdin byte for byte,
//     and the child's stdout reaches the output FIFO byte for byte; stderr is
//     the agent's own.
//   - Writers of the input FIFO coming and going never give the child EOF.
//   - Output waits for a reader (backpressure); nothing is dropped.
//   - Input read from the FIFO but not consumed by a child that ended, even
//     bytes left in its stdin pipe, goes to the next child.
//   - Every goroutine started here is waited for before Run returns, and
//     every descriptor opened here is closed.
package bridge
