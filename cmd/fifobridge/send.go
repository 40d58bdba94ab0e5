//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

// Exit codes of send besides the child's own.
const (
	exitTimedOut = 124
	exitBridge   = 125
)

// sendGrace is how long send and ask wait past their -timeout for the
// agent's own timed-out frame, which the agent writes at the same limit,
// counted from when it took the line, before they give up by themselves.
// While their stdout blocks they cannot take that frame, and end at the
// -timeout itself (client: a blocked write is given up at the limit).
// Given up first, the outcome is the same (124); ask then reads why a
// child was not ready from the status file.
const sendGrace = 250 * time.Millisecond

// send is `fifobridge send [-dir DIR] [-timeout 30s] [-wait 0] [-id ID] [-arg A]... [TEXT...]`.
// Of the environment it reads only FIFOBRIDGE_DIR.
func send(cmdline []string) int {
	fs, dir := hostFlagSet("fifobridge send")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long (0: never); also the request's limit")
	id := fs.String("id", "", "request id (default: a random one)")
	wait := fs.Duration("wait", 0, "first wait up to this long for an agent to serve DIR")
	var args stringList
	fs.Var(&args, "arg", "append `A` to PROGRAM's arguments for this request (repeatable; the agent needs -allow-args)")
	if code, ok := parseHostFlags(fs, cmdline, "usage: fifobridge send [-dir DIR] [-timeout 30s] [-wait 0] [-id ID] [-arg A]... [TEXT...]", "dir"); !ok {
		return code
	}
	if *timeout < 0 || *wait < 0 {
		fmt.Fprintln(os.Stderr, "fifobridge send: -timeout and -wait must not be negative")
		return exitBridge
	}
	input, err := textInput(fs.Args(), "\n")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge send: %v\n", err)
		return exitBridge
	}

	ctx, stopSignals := catchClientSignals()
	defer stopSignals()
	if *wait > 0 {
		client.WaitServing(ctx, *dir, *wait) // -timeout counts from the send
	}
	reqCtx := ctx
	if *timeout > 0 {
		var cancel context.CancelFunc
		reqCtx, cancel = context.WithTimeout(ctx, *timeout+sendGrace)
		defer cancel()
	}
	// Only a -timeout given on the command line overrides the agent's own
	// -timeout; the default is send's patience, not a limit for the child.
	limit := time.Duration(0)
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "timeout" {
			limit = *timeout
		}
	})
	warn := func(msg string) { fmt.Fprintf(os.Stderr, "fifobridge send: %s\n", msg) }
	res, err := client.Send(reqCtx, client.Options{Dir: *dir, ID: *id, Stdin: input, Args: args, Limit: limit, Stdout: os.Stdout, Stderr: os.Stderr, Warn: warn})
	return sendExit(reqCtx, res, err, *timeout)
}

// sendExit maps how the request ended to send's exit code; ctx is the
// request's, which a caught signal and -timeout end.
func sendExit(ctx context.Context, res client.Result, err error, timeout time.Duration) int {
	if code, ok := clientErrorExit(ctx, "send", err, timeout, ""); ok {
		return code
	}
	if res.TimedOut {
		say(ctx, "fifobridge send: request timed out\n")
		return exitTimedOut
	}
	return res.Code
}
