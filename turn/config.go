package turn

import (
	"errors"
	"regexp"
	"time"
)

// DefaultSettle is how long the output must have stayed quiet after a
// prompt before the child counts as ready, unless the caller sees sooner
// that the child waits for input (Settle).
const DefaultSettle = 20 * time.Millisecond

// SettleAtOnce is a Config.Settle that takes a prompt as soon as it is
// shown (run -settle 0): the deadline after output is the output's time.
const SettleAtOnce time.Duration = -1

// MaxHold is the longest line the tracker holds back while it cannot tell
// whether it is the prompt. A longer line is handed on in pieces of this
// size; the prompt is still matched against all of the line, and what
// was handed on of it stays in the answer.
const MaxHold = 4096

// EchoMode says where the echo of a turn's input is looked for.
type EchoMode uint8

const (
	// EchoAuto removes a terminal's echo, and on pipes the echo of a child
	// that has shown it echoes its input itself (bash -i with readline,
	// sqlite3 -interactive): see the package doc.
	EchoAuto EchoMode = iota
	// EchoOn removes it on pipes from the first turn on, for a child
	// known to echo its input.
	EchoOn
	// EchoOff never removes it.
	EchoOff
)

// Config says how to follow one child.
type Config struct {
	// Prompt matches the child's prompt: the text after the last newline,
	// carriage returns and escape sequences removed, or the longest end of
	// that text it matches (see the package doc). Its named groups are
	// reported for the prompt that ends a turn (Groups, Status). Required.
	Prompt *regexp.Regexp
	// Continuation, if set, matches the child's continuation prompt, the
	// one it shows when it wants more input ("... "). Such a line, after
	// the whole input, ends the turn as Incomplete; before the input's
	// last line is read it is a prompt for a later line; it never makes
	// the child ready, even where Prompt matches it too.
	Continuation *regexp.Regexp
	// Settle is how long the output must stay quiet after a prompt before
	// the child counts as ready: 0 means DefaultSettle, a negative value
	// (SettleAtOnce) no time at all.
	Settle time.Duration
	// Terminal says the child writes to a terminal: answers lose "\r" of
	// "\r\n" and at a line's start, and escape sequences; the echo is the
	// terminal's, with control characters shown as ^X.
	Terminal bool
	// Echo says where the input's echo is looked for.
	Echo EchoMode
	// Ready, if set, is called each time the child becomes ready, from
	// within the call that made it so (Output, Tick, Settle, ...): an
	// event for whoever waits for a prompt, which then need not poll
	// Ready. It must not call the Tracker.
	Ready func()
}

// ErrNoPrompt is New's error for a Config without a prompt.
var ErrNoPrompt = errors.New("turn: no prompt expression")

// New returns a Tracker for a new child, busy until its first prompt.
func New(cfg Config) (*Tracker, error) {
	if cfg.Prompt == nil {
		return nil, ErrNoPrompt
	}
	settle := cfg.Settle
	switch {
	case settle < 0:
		settle = 0
	case settle == 0:
		settle = DefaultSettle
	}
	t := &Tracker{m: newMatcher(cfg.Prompt, cfg.Continuation), settle: settle, terminal: cfg.Terminal, state: stBusy,
		onReady: cfg.Ready}
	t.ln.max = maxLine
	switch {
	case cfg.Echo == EchoOn || cfg.Echo == EchoAuto && cfg.Terminal:
		t.echo = echoAlways
	case cfg.Echo == EchoAuto:
		t.echo = echoLearn
	}
	t.ln.reset()
	return t, nil
}
