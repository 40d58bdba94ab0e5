// Package fifo makes, checks, waits for and opens Linux named pipes.
//
// Guarantees:
//
//   - Every descriptor opened here has O_CLOEXEC, so no FIFO leaks into a
//     child process.
//   - A path that exists but is not a FIFO is reported as ErrNotFIFO and is
//     never removed, truncated or written.
//   - No open here blocks: opens are O_NONBLOCK. Wait, which sleeps on
//     inotify until a FIFO appears, takes a context.
//   - Source and Sink are the agent's long-lived ends of the input and output
//     FIFOs. Both are opened O_RDWR, so a Source never reads EOF when writers
//     come and go (and never spins), and a Sink never gets EPIPE when readers
//     come and go: bytes written while nobody reads wait in the pipe buffer,
//     and once it is full, Write waits (backpressure). Both follow their path:
//     after Reopen, bytes still buffered in the replaced FIFO are carried over.
package fifo
