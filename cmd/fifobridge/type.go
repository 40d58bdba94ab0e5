//go:build linux

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

const typeUsage = "usage: fifobridge type [-dir DIR] [-session NAME] [-n] [-eof] [-timeout 30s] [TEXT...]"

// typeInput is `fifobridge type [-dir DIR] [-session NAME] [-n] [-eof]
// [-timeout 30s] [TEXT...]`: it writes TEXT (words joined by spaces) and
// a newline (none with -n), or without TEXT its stdin (and a newline when
// that does not end with one, none with -n), into the input FIFO of
// stream mode's child or of session NAME's, and with -eof then ends that
// input once the agent has read what was typed. It exits 0 once all is
// written (and ended); 125 with one line where there is no such input
// (exec mode, sessions mode without -session, a session not open) or on
// a bridge error; 124 past -timeout, saying how much was typed. Of the
// environment it reads only FIFOBRIDGE_DIR.
func typeInput(cmdline []string) int {
	fs, dir := hostFlagSet("fifobridge type")
	session := fs.String("session", "", "type into session `NAME` of an agent run with -mode sessions")
	noNewline := fs.Bool("n", false, "add no newline")
	eof := fs.Bool("eof", false, "then end the child's input once the agent has read what was typed (on a terminal: type the EOF character)")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long (0: never)")
	if code, ok := parseHostFlags(fs, cmdline, typeUsage, "dir"); !ok {
		return code
	}
	if *timeout < 0 {
		fmt.Fprintf(os.Stderr, "fifobridge type: -timeout must not be negative\n%s\n", typeUsage)
		return exitBridge
	}
	input, err := typedText(fs.Args(), !*noNewline)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge type: %v\n", err)
		return exitBridge
	}
	ctx, stop := hostContext(*timeout)
	defer stop()
	n, err := client.Type(ctx, client.TypeOptions{Dir: *dir, Session: *session, Input: input, EOF: *eof, Warn: warnAs("type")})
	note := ""
	switch {
	case err != nil && n < len(input):
		note = fmt.Sprintf("%d of %d bytes typed", n, len(input))
	case err != nil && *eof && n > 0:
		// The text went in; only the end of the input did not.
		note = fmt.Sprintf("all %d bytes typed, the input not ended", n)
	}
	return controlExit(ctx, "type", err, *timeout, note)
}

// typedText is what type writes: TEXT joined by spaces, or its stdin,
// with a newline at the end when newline is set and it has none there
// (TEXT always gets one).
func typedText(text []string, newline bool) ([]byte, error) {
	b, err := textInput(text, "")
	if err != nil {
		return nil, err
	}
	if newline && (len(text) > 0 || len(b) == 0 || b[len(b)-1] != '\n') {
		b = append(b, '\n')
	}
	return b, nil
}
