package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/bridge"
)

// Exit codes of send besides the child's own.
const (
	exitTimedOut = 124
	exitBridge   = 125
)

// sendGrace is how long send waits past its -timeout for the agent's own
// timed-out exit frame before it gives up by itself.
const sendGrace = time.Second

// send is `fifobridge send [-dir DIR] [-timeout 30s] [-id ID] [TEXT...]`.
func send(args []string) int {
	fs := flag.NewFlagSet("fifobridge send", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "/run/fifobridge", "directory of the agent's FIFOs")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long (0: never); also the request's limit")
	id := fs.String("id", "", "request id (default: assigned by the agent)")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Println("usage: fifobridge send [-dir DIR] [-timeout 30s] [-id ID] [TEXT...]")
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(os.Stderr, "fifobridge send: %v\n", err)
		return exitBridge
	}
	if *timeout < 0 {
		fmt.Fprintln(os.Stderr, "fifobridge send: -timeout must not be negative")
		return exitBridge
	}

	var input []byte
	if fs.NArg() > 0 {
		input = []byte(strings.Join(fs.Args(), " ") + "\n")
	} else {
		var err error
		if input, err = io.ReadAll(os.Stdin); err != nil {
			fmt.Fprintf(os.Stderr, "fifobridge send: read stdin: %v\n", err)
			return exitBridge
		}
	}

	// INT and TERM end the request early; Send removes its reply FIFO
	// before it returns.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout+sendGrace)
		defer cancel()
	}
	res, err := bridge.Send(ctx, *dir, *id, input, *timeout, os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(os.Stderr, "fifobridge send: timed out after %s\n", *timeout)
		return exitTimedOut
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, "fifobridge send: interrupted")
		return 130
	case err != nil:
		fmt.Fprintf(os.Stderr, "fifobridge send: %v\n", err)
		return exitBridge
	case res.TimedOut:
		fmt.Fprintf(os.Stderr, "fifobridge send: request timed out\n")
		return exitTimedOut
	}
	return res.Code
}
