//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

// ask is `fifobridge ask [-dir DIR] [-timeout 30s] [-wait 0] [-quiet D] [TEXT...]`:
// one turn of a conversation (run -prompt). Of the environment it reads
// only FIFOBRIDGE_DIR.
func ask(cmdline []string) int {
	fs := flag.NewFlagSet("fifobridge ask", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "/run/fifobridge", "directory of the agent's FIFOs")
	timeout := fs.Duration("timeout", 30*time.Second, "the turn's time limit: past it the child is interrupted (0: none)")
	wait := fs.Duration("wait", 0, "first wait up to this long for an agent to serve DIR/ask")
	quiet := fs.Duration("quiet", 0, "also end the turn after this long without output (0: only at a prompt)")
	if err := parseFlagsOnly(fs, cmdline, "dir"); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Println("usage: fifobridge ask [-dir DIR] [-timeout 30s] [-wait 0] [-quiet D] [TEXT...]")
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(os.Stderr, "fifobridge ask: %v\n", err)
		return exitBridge
	}
	if *timeout < 0 || *wait < 0 || *quiet < 0 {
		fmt.Fprintln(os.Stderr, "fifobridge ask: -timeout, -wait and -quiet must not be negative")
		return exitBridge
	}
	input, err := textInput(fs.Args(), "")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge ask: %v\n", err)
		return exitBridge
	}
	// The agent, seeing the reply FIFO's reader gone, interrupts the turn.
	ctx, stopSignals := catchClientSignals()
	defer stopSignals()
	if *wait > 0 {
		client.WaitAsking(ctx, *dir, *wait)
	}
	turnCtx := ctx
	if *timeout > 0 {
		var cancel context.CancelFunc
		turnCtx, cancel = context.WithTimeout(ctx, *timeout+sendGrace)
		defer cancel()
	}
	warn := func(msg string) { fmt.Fprintf(os.Stderr, "fifobridge ask: %s\n", msg) }
	res, err := client.Ask(turnCtx, client.AskOptions{Dir: *dir, Input: input, Limit: *timeout, Quiet: *quiet, Stdout: os.Stdout, Warn: warn})
	return askExit(turnCtx, res, err, *timeout)
}

// askExit maps how the turn ended to ask's exit code: 0 at a prompt, the
// child's status when it ended during the turn, 124 past the limit, 125
// for the bridge's errors, 128+N when ask was interrupted by signal N. ctx
// is the turn's, which a caught signal and -timeout end.
func askExit(ctx context.Context, res client.Result, err error, timeout time.Duration) int {
	if code, ok := clientErrorExit(ctx, "ask", err, timeout); ok {
		return code
	}
	switch {
	case res.TimedOut:
		say(ctx, "fifobridge ask: timed out after %s; the child was interrupted\n", timeout)
		return exitTimedOut
	case res.Exited && res.Code != 0:
		say(ctx, "fifobridge ask: the child ended during the turn (exit code %d)\n", res.Code)
	}
	return res.Code
}
