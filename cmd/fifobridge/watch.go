//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

const watchUsage = "usage: fifobridge watch [-dir DIR] [-session NAME] [-raw] [-timeout 0]"

// watchOutput is `fifobridge watch [-dir DIR] [-session NAME] [-raw] [-timeout 0]`:
// it prints what the child of a stream agent, or of session NAME, writes
// from now on (on a terminal cleaned as ask's answers are, with -raw as
// written) until that child ends (exit with its status), the stream or
// session closes (0), INT or TERM (130, 143) or -timeout (124); a watch
// refused (no such child, not a reader of the output FIFO) exits 125 with
// one line. Each lost frame (the watch did not keep up) is one line on
// stderr. Of the environment it reads only FIFOBRIDGE_DIR.
func watchOutput(cmdline []string) int {
	fs, dir := hostFlagSet("fifobridge watch")
	session := fs.String("session", "", "watch session `NAME` of an agent run with -mode sessions")
	raw := fs.Bool("raw", false, "a terminal's output as written, escape sequences and \\r included")
	timeout := fs.Duration("timeout", 0, "stop watching after this long (0: never)")
	if code, ok := parseHostFlags(fs, cmdline, watchUsage, "dir"); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(os.Stderr, "fifobridge watch: takes no arguments\n%s\n", watchUsage)
		return exitBridge
	case *timeout < 0:
		fmt.Fprintln(os.Stderr, "fifobridge watch: -timeout must not be negative")
		return exitBridge
	}
	ctx, stop := hostContext(*timeout)
	defer stop()
	lost := func(n int64) {
		fmt.Fprintf(os.Stderr, "fifobridge watch: lost %d bytes of the output here: the watch did not keep up\n", n)
	}
	res, err := client.Watch(ctx, client.WatchOptions{Dir: *dir, Session: *session, Raw: *raw, Stdout: os.Stdout,
		Lost: lost, Warn: warnAs("watch")})
	return watchExit(ctx, res, err, *timeout)
}

// watchExit maps how the watch ended to watch's exit code: the child's
// status when it ended, 0 when the stream or session closed, 125 with
// one line when the watch was refused or failed, 124 past -timeout, 128+N
// for a caught signal N.
func watchExit(ctx context.Context, res client.Watched, err error, timeout time.Duration) int {
	var rej *client.RejectedError
	if errors.As(err, &rej) {
		say(ctx, "fifobridge watch: %s\n", rej.Msg)
		return exitBridge
	}
	if code, ok := clientErrorExit(ctx, "watch", err, timeout, ""); ok {
		return code
	}
	if res.Closed {
		return 0
	}
	return res.Code
}
