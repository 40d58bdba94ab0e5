// Package client is what `fifobridge send` does: it sends one exec-mode
// request to an agent and relays the request's output and exit.
//
// Guarantees:
//
//   - Send never blocks forever on an open or a write: an absent agent is
//     ErrNoAgent at once, and every wait ends with its context.
//   - The private reply FIFO Send makes is removed on every way out.
package client
