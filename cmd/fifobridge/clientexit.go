//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/child"
)

// textInput is what send and ask pass on: TEXT joined by spaces, plus
// suffix, or without TEXT the command's own stdin as it is.
func textInput(text []string, suffix string) ([]byte, error) {
	if len(text) > 0 {
		return []byte(strings.Join(text, " ") + suffix), nil
	}
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	return b, nil
}

// clientErrorExit maps the errors send and ask (name) end with alike to an
// exit code, with one line on stderr (see say): 128+N when a caught signal
// N canceled ctx, 124 past the time limit, 141 quietly when stdout's reader
// left (as a pipeline expects), 125 for any other; ok is false when err is
// nil and the caller decides by the result. ctx is the request's: a caught
// signal and the command's -timeout end it. note, when not "", says on
// the same line why the request did not end (ask: a child not ready).
func clientErrorExit(ctx context.Context, name string, err error, timeout time.Duration, note string) (code int, ok bool) {
	if note != "" {
		note = ": " + note
	}
	if how, code, ok := endedBy(ctx, err, timeout); ok {
		say(ctx, "fifobridge %s: %s%s\n", name, how, note)
		return code, true
	}
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, syscall.EPIPE):
		return 128 + int(syscall.SIGPIPE), true
	}
	say(ctx, "fifobridge %s: %v\n", name, err)
	return exitBridge, true
}

// endedBy says how a request that ended with err was given up, when a
// caught signal N canceled ctx ("interrupted by SIGINT", 128+N) or its
// time limit passed ("timed out after 30s", 124); ok is false otherwise.
func endedBy(ctx context.Context, err error, timeout time.Duration) (how string, code int, ok bool) {
	var sig *interrupted
	switch {
	case err == nil:
		return "", 0, false
	case errors.As(context.Cause(ctx), &sig):
		return "interrupted by SIG" + child.SignalName(sig.sig), 128 + int(sig.sig), true
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %s", timeout), exitTimedOut, true
	}
	return "", 0, false
}

// hostContext is catchClientSignals' context, also done after timeout
// when that is positive: the context of close and ls.
func hostContext(timeout time.Duration) (ctx context.Context, stop func()) {
	ctx, stopSignals := catchClientSignals()
	if timeout <= 0 {
		return ctx, stopSignals
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, func() { cancel(); stopSignals() }
}

// catchClientSignals catches, for every host command, every signal that would end
// them otherwise, so that the reply FIFO is removed on every way out: INT,
// TERM, HUP and QUIT cancel the returned context (see relaySignals), and
// SIGPIPE, ignored, turns a write to a closed stdout into EPIPE. stop
// waits for the relay. The signals stay caught until the command's exit,
// which follows: each signal.Notify, and each signal.Stop, is a round trip
// to the runtime's signal thread (some 50 µs on a busy machine), so
// SIGPIPE is ignored rather than caught and nothing is undone on the way
// out (the reaper does without signal.Stop for the same reason).
func catchClientSignals() (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	signal.Ignore(syscall.SIGPIPE)
	return relaySignals(context.Background(), sigs)
}
