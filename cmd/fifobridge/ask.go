//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

// ask is `fifobridge ask [-dir DIR] [-session NAME] [-timeout 30s] [-wait 0] [-quiet D] [TEXT...]`:
// one turn of a conversation (run -prompt), or of session NAME's. Of the
// environment it reads only FIFOBRIDGE_DIR.
func ask(cmdline []string) int {
	fs, dir := hostFlagSet("fifobridge ask")
	timeout := fs.Duration("timeout", 30*time.Second, "the turn's time limit: past it the child is interrupted (0: none)")
	wait := fs.Duration("wait", 0, "first wait up to this long for an agent to serve DIR/ask")
	quiet := fs.Duration("quiet", 0, "also end the turn after this long without output (0: only at a prompt)")
	session := fs.String("session", "", "ask session `NAME` of an agent run with -mode sessions")
	if code, ok := parseHostFlags(fs, cmdline, "usage: fifobridge ask [-dir DIR] [-session NAME] [-timeout 30s] [-wait 0] [-quiet D] [TEXT...]", "dir"); !ok {
		return code
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
		if *session != "" {
			client.WaitSessionAsking(ctx, *dir, *session, *wait)
		} else {
			client.WaitAsking(ctx, *dir, *wait)
		}
	}
	turnCtx := ctx
	if *timeout > 0 {
		var cancel context.CancelFunc
		turnCtx, cancel = context.WithTimeout(ctx, *timeout+sendGrace)
		defer cancel()
	}
	warn := func(msg string) { fmt.Fprintf(os.Stderr, "fifobridge ask: %s\n", msg) }
	res, err := client.Ask(turnCtx, client.AskOptions{Dir: *dir, Session: *session, Input: input, Limit: *timeout, Quiet: *quiet, Stdout: os.Stdout, Warn: warn})
	return askExit(turnCtx, res, err, *timeout)
}

// askExit maps how the turn ended to ask's exit code, with at most one
// line on stderr (see turnExit); 125 for the bridge's errors, 128+N when
// ask was interrupted by signal N. ctx is the turn's, which a caught
// signal and -timeout end.
func askExit(ctx context.Context, res client.Result, err error, timeout time.Duration) int {
	if how, code, ok := endedBy(ctx, err, timeout); ok && res.Queued {
		say(ctx, "fifobridge ask: %s\n", queuedLine(how, res.NotReady))
		return code
	}
	// Interrupted, or past -timeout before the agent's last frame: why
	// the child did not answer goes on the same line.
	if code, ok := clientErrorExit(ctx, "ask", err, timeout, res.NotReady); ok {
		return code
	}
	code, line := turnExit(res, timeout)
	if line != "" {
		say(ctx, "fifobridge ask: %s\n", line)
	}
	return code
}

// queuedLine is ask's line for an ask that gave up while queued, how (a
// signal, its -timeout) ended it: nothing was sent, and no turn was
// interrupted for it; notReady, when not "", says why the child was not
// ready for it.
func queuedLine(how, notReady string) string {
	const queued = "the ask gave up while queued, so nothing was sent to the child and no turn was interrupted for it"
	if notReady != "" {
		return how + ": " + notReady + "; " + queued
	}
	return how + ": " + queued
}

// turnExit is the exit code of a turn that ended as res says, and the
// line that says why when it is not the child's own answer: the prompt's
// status (0 without one) at a prompt, 125 for an incomplete input, 124
// past the limit (while queued, or naming a child that was not ready),
// the child's status when it ended during the turn.
func turnExit(res client.Result, timeout time.Duration) (int, string) {
	switch {
	case res.TimedOut && res.Queued:
		return exitTimedOut, queuedLine(fmt.Sprintf("timed out after %s", timeout), res.NotReady)
	case res.TimedOut && res.NotReady != "":
		return exitTimedOut, fmt.Sprintf("timed out after %s: %s", timeout, res.NotReady)
	case res.TimedOut:
		return exitTimedOut, fmt.Sprintf("timed out after %s; the child was interrupted", timeout)
	case res.Incomplete:
		return exitBridge, "the input was incomplete: the child asked for more (its continuation prompt, -continuation) and was interrupted; the next ask waits for its prompt"
	case res.Exited && res.Code != 0:
		return res.Code, fmt.Sprintf("the child ended during the turn (exit code %d)", res.Code)
	case res.Exited:
		return 0, ""
	case res.Status != nil && (*res.Status < 0 || *res.Status > 255):
		return exitBridge, fmt.Sprintf("the prompt shows status %d, which is no exit code (0 to 255)", *res.Status)
	case res.Status != nil:
		return *res.Status, ""
	}
	return 0, ""
}
