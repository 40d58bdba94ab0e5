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

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/client"
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
	// Every signal that would end send otherwise is caught, so that the
	// reply FIFO is removed on every way out. Caught, SIGPIPE turns a write
	// to a closed stdout into EPIPE.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	defer signal.Stop(sigs)
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var caught syscall.Signal
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		select {
		case sig := <-sigs:
			caught = sig.(syscall.Signal)
			interrupt()
		case <-ctx.Done():
		}
	}()
	defer func() { interrupt(); <-relayed }()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout+sendGrace)
		defer cancel()
	}
	// Only a -timeout the user chose overrides the agent's own -timeout; the
	// default is send's patience, not a limit for the child.
	limit := time.Duration(0)
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "timeout" {
			limit = *timeout
		}
	})
	if os.Getenv("FIFOBRIDGE_TIMEOUT") != "" {
		limit = *timeout
	}
	res, err := client.Send(ctx, client.Options{Dir: *dir, ID: *id, Stdin: input, Limit: limit, Stdout: os.Stdout, Stderr: os.Stderr})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(os.Stderr, "fifobridge send: timed out after %s\n", *timeout)
		return exitTimedOut
	case errors.Is(err, context.Canceled):
		<-relayed // caught is set before the cancel that got us here
		fmt.Fprintf(os.Stderr, "fifobridge send: interrupted by SIG%s\n", child.SignalName(caught))
		return 128 + int(caught)
	case errors.Is(err, syscall.EPIPE):
		return 128 + int(syscall.SIGPIPE) // stdout's reader left, as a pipeline expects
	case err != nil:
		fmt.Fprintf(os.Stderr, "fifobridge send: %v\n", err)
		return exitBridge
	case res.TimedOut:
		fmt.Fprintf(os.Stderr, "fifobridge send: request timed out\n")
		return exitTimedOut
	}
	return res.Code
}
