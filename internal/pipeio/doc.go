//go:build linux

// Package pipeio moves bytes between pipes and FIFOs for the agent's data
// path: kernel-side splices, waits for a pipe to be readable or writable,
// and reads that wait the same way. It holds the data path's one speed
// trick, the busy-poll, and says so here.
//
// Guarantees:
//
//   - Every descriptor is the caller's: a wait looks at the descriptor of
//     the file it was given, through that file's RawConn, and at no other.
//     Nothing here opens, closes or keeps a descriptor but the pipes Pipe
//     and Input make, and no wait touches another wait's.
//   - The files must be non-blocking (pollable); their deadlines apply, as
//     they do to os.File's own Read and Write.
//   - The busy-poll is the only process-visible effect: for a short window
//     after bytes moved (at most 50 µs, adapting to the traffic, off while
//     traffic is sparse), a wait polls its own descriptor with a zero
//     timeout and yields the CPU between polls, before it parks in the
//     runtime's poller. It changes when a wait notices bytes, never what it
//     returns. At most two waits spin at once, and none while the runtime
//     has one P; the others park at once. It changes no thread's affinity,
//     no scheduler setting and no signal disposition.
//   - One descriptor's waits may spin longer: a ReadSpinner's, for 1 ms
//     after each Expect (a conversation's output copy after each turn's
//     input), a parked one woken to do so. Nothing else spins longer for
//     it, and without Expect nothing spins beyond the window above: an
//     idle agent never spins.
//   - FIFOBRIDGE_BUSY_POLL=0 in the environment at start turns the
//     busy-poll off, Expect's included: every wait then parks at once, as
//     os.File's do.
package pipeio
