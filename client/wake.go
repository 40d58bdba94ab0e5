//go:build linux

package client

import "context"

// whenDone runs f on a goroutine of its own once ctx is done, as
// context.AfterFunc does, and returns stop, to be called once: after it,
// f neither runs nor will run (stop waits for an f that already started).
// So a wake that sets a deadline on a descriptor an Asker keeps (its reply
// FIFO, DIR/ask) cannot land on the next turn's.
func whenDone(ctx context.Context, f func()) (stop func()) {
	ran := make(chan struct{})
	stopf := context.AfterFunc(ctx, func() { defer close(ran); f() })
	return func() {
		if !stopf() {
			<-ran
		}
	}
}
