//go:build linux

package main

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

// TestRelaySignals: the first signal cancels the context with the signal as
// its cause; a context derived for a timeout does not race with the relay
// (run with -race).
func TestRelaySignals(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	ctx, stop := relaySignals(context.Background(), sigs)
	defer stop()
	reqCtx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	sigs <- syscall.SIGTERM
	select {
	case <-reqCtx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the signal did not cancel the context")
	}
	var sig *interrupted
	if !errors.As(context.Cause(ctx), &sig) || sig.sig != syscall.SIGTERM {
		t.Fatalf("cause %v, want interrupted by SIGTERM", context.Cause(ctx))
	}
	if code := sendExit(reqCtx, client.Result{}, reqCtx.Err(), time.Hour); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit code %d, want %d", code, 128+int(syscall.SIGTERM))
	}
}

// TestRelaySignalsStop: stop ends the relay without a signal; the context
// is then cancelled without an interrupted cause.
func TestRelaySignalsStop(t *testing.T) {
	ctx, stop := relaySignals(context.Background(), make(chan os.Signal))
	stop()
	stop()
	if ctx.Err() == nil {
		t.Fatal("stop left the context alive")
	}
	var sig *interrupted
	if errors.As(context.Cause(ctx), &sig) {
		t.Fatalf("cause %v without a signal", context.Cause(ctx))
	}
}
