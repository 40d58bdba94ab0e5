//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

const closeUsage = "usage: fifobridge close [-dir DIR] [-timeout 30s] NAME... | -all"

// closeSessions is `fifobridge close [-dir DIR] [-timeout 30s] NAME...`:
// it closes every session named, all at once, each with a line of its
// own, and exits 0 once all are closed; 125 when any was not open (the
// others are closed all the same) or on a bridge error, with one line per
// session that failed; 124 past -timeout. A NAME given twice is closed
// once. With -all instead of NAMEs it closes every open session, all at
// once, with one line, and exits 0 once all are gone, also when none
// was open. Of the environment it reads only FIFOBRIDGE_DIR.
func closeSessions(cmdline []string) int {
	fs, dir := hostFlagSet("fifobridge close")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long (0: never)")
	all := fs.Bool("all", false, "close every open session")
	if code, ok := parseHostFlags(fs, cmdline, closeUsage, "dir"); !ok {
		return code
	}
	switch {
	case *timeout < 0:
		fmt.Fprintln(os.Stderr, "fifobridge close: -timeout must not be negative")
		return exitBridge
	case *all && fs.NArg() > 0:
		fmt.Fprintln(os.Stderr, "fifobridge close: -all takes no NAME: it closes every open session")
		return exitBridge
	case *all:
		return closeAll(*dir, *timeout)
	case fs.NArg() == 0:
		fmt.Fprintf(os.Stderr, "fifobridge close: want at least one NAME, or -all\n%s\n", closeUsage)
		return exitBridge
	}
	names := slices.Compact(slices.Sorted(slices.Values(fs.Args())))

	ctx, stop := hostContext(*timeout)
	defer stop()
	closed := client.Sessions{Dir: *dir, Warn: warnAs("close")}.Close(ctx, names...)
	return closeExit(ctx, closed, *timeout)
}

// closeAll is `fifobridge close -all`.
func closeAll(dir string, timeout time.Duration) int {
	ctx, stop := hostContext(timeout)
	defer stop()
	err := client.Sessions{Dir: dir, Warn: warnAs("close")}.CloseAll(ctx)
	var rej *client.RejectedError
	if errors.As(err, &rej) {
		say(ctx, "fifobridge close: %s\n", rej.Msg)
		return exitBridge
	}
	if code, ok := clientErrorExit(ctx, "close", err, timeout, ""); ok {
		return code
	}
	return 0
}

// closeExit maps how the closes ended to close's exit code: 0 when all
// closed, else one line per session that did not (one in all when the
// command was interrupted or timed out), and 128+N, 124 or 125.
func closeExit(ctx context.Context, closed []client.Closed, timeout time.Duration) int {
	var failed []string
	var last error
	said := map[string]bool{} // an error of the agent's, not a session's, is said once
	for _, c := range closed {
		if c.Err == nil {
			continue
		}
		failed, last = append(failed, c.Name), c.Err
		var rej *client.RejectedError
		switch {
		case errors.As(c.Err, &rej):
			say(ctx, "fifobridge close: %s: %s\n", c.Name, rej.Msg)
		case ctx.Err() != nil:
		case errors.Is(c.Err, client.ErrNotSessions) || errors.Is(c.Err, client.ErrNoAgent):
			if !said[c.Err.Error()] {
				said[c.Err.Error()] = true
				say(ctx, "fifobridge close: %v\n", c.Err)
			}
		default:
			say(ctx, "fifobridge close: %s: %v\n", c.Name, c.Err)
		}
	}
	if last == nil {
		return 0
	}
	if ctx.Err() != nil {
		note := strings.Join(failed, ", ") + " not known to be closed"
		code, _ := clientErrorExit(ctx, "close", context.Cause(ctx), timeout, note)
		return code
	}
	return exitBridge
}
