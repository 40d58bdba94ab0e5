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

const signalUsage = "usage: fifobridge signal [-dir DIR] [-session NAME] [-timeout 30s] SIGNAL"

// signalChild is `fifobridge signal [-dir DIR] [-session NAME]
// [-timeout 30s] SIGNAL`: it sends SIGNAL (INT, SIGINT or 2) to the
// foreground of stream mode's child, or of session NAME's, and exits 0
// once the agent sent it; 125 with one line for an unknown signal or
// session, no child, or a bridge error; 124 past -timeout. Of the
// environment it reads only FIFOBRIDGE_DIR.
func signalChild(cmdline []string) int {
	fs, dir := hostFlagSet("fifobridge signal")
	session := fs.String("session", "", "signal session `NAME` of an agent run with -mode sessions")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long (0: never)")
	if code, ok := parseHostFlags(fs, cmdline, signalUsage, "dir"); !ok {
		return code
	}
	if fs.NArg() != 1 || *timeout < 0 {
		fmt.Fprintf(os.Stderr, "fifobridge signal: want one SIGNAL, and -timeout must not be negative\n%s\n", signalUsage)
		return exitBridge
	}
	ctx, stop := hostContext(*timeout)
	defer stop()
	err := client.Signal(ctx, client.SignalOptions{Dir: *dir, Session: *session, Signal: fs.Arg(0), Warn: warnAs("signal")})
	return controlExit(ctx, "signal", err, *timeout, "")
}

// controlExit maps how a control line of name (signal, type) ended to
// its exit code, with one line on stderr: 0, the agent's refusal (125;
// 124 when its time limit passed), or clientErrorExit's, note on the
// same line.
func controlExit(ctx context.Context, name string, err error, timeout time.Duration, note string) int {
	var rej *client.RejectedError
	if errors.As(err, &rej) {
		if note != "" {
			note = " (" + note + ")"
		}
		say(ctx, "fifobridge %s: %s%s\n", name, rej.Msg, note)
		if rej.TimedOut {
			return exitTimedOut
		}
		return exitBridge
	}
	if code, ok := clientErrorExit(ctx, name, err, timeout, note); ok {
		return code
	}
	return 0
}
