//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/fifobridge/fifobridge/child"
)

// interrupted is the cause of a context a caught signal cancelled.
type interrupted struct{ sig syscall.Signal }

func (e *interrupted) Error() string {
	return fmt.Sprintf("interrupted by SIG%s", child.SignalName(e.sig))
}

// relaySignals returns a context that the first signal from sigs cancels,
// with an *interrupted as its cause (context.Cause). stop ends the relay,
// waits for its goroutine and cancels the context.
func relaySignals(parent context.Context, sigs <-chan os.Signal) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-sigs:
			if s, ok := sig.(syscall.Signal); ok {
				cancel(&interrupted{sig: s})
			}
		case <-quit:
		}
	}()
	return ctx, sync.OnceFunc(func() {
		close(quit)
		<-done
		cancel(nil)
	})
}
