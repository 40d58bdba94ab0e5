package turn

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// DefaultQuiet is how long the output must have stopped before its last
// line is taken for the prompt.
const DefaultQuiet = 20 * time.Millisecond

// MaxHold is the longest line the tracker holds back while it cannot tell
// whether it is the prompt. A longer line is handed on in pieces of this
// size, and the prompt is then looked for in what follows the last piece.
const MaxHold = 4096

// EchoMode says where the echo of a turn's input is looked for.
type EchoMode uint8

const (
	// EchoAuto removes the echo in terminal mode only: a terminal echoes
	// what it is given, pipes do not.
	EchoAuto EchoMode = iota
	// EchoOn removes it on pipes too, for a child that echoes its input
	// itself (sqlite3 -interactive does).
	EchoOn
	// EchoOff never removes it.
	EchoOff
)

// Config says how to follow one child.
type Config struct {
	// Prompt matches the child's prompt: the text after the last newline,
	// carriage returns and escape sequences removed, or an end of that
	// text of at most 64 bytes (see the package doc). Required.
	Prompt *regexp.Regexp
	// Quiet is how long the output must have stopped before the prompt is
	// looked for; 0 means DefaultQuiet.
	Quiet time.Duration
	// Terminal says the child writes to a terminal: answers lose "\r" of
	// "\r\n" and at a line's start, and escape sequences; the echo is the
	// terminal's, with control characters shown as ^X.
	Terminal bool
	// Echo says where the input's echo is looked for.
	Echo EchoMode
}

// ErrNoPrompt is New's error for a Config without a prompt.
var ErrNoPrompt = errors.New("turn: no prompt expression")

// New returns a Tracker for a new child, busy until its first prompt.
func New(cfg Config) (*Tracker, error) {
	if cfg.Prompt == nil {
		return nil, ErrNoPrompt
	}
	if cfg.Quiet < 0 {
		return nil, fmt.Errorf("turn: negative quiet period %v", cfg.Quiet)
	}
	if cfg.Quiet == 0 {
		cfg.Quiet = DefaultQuiet
	}
	echo := cfg.Echo == EchoOn || cfg.Echo == EchoAuto && cfg.Terminal
	t := &Tracker{prompt: cfg.Prompt, quiet: cfg.Quiet, terminal: cfg.Terminal, echo: echo, state: stBusy}
	t.ln.reset()
	return t, nil
}
