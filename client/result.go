//go:build linux

package client

// Result is the outcome of a request that ran.
type Result struct {
	Code     int
	Signal   string
	TimedOut bool
	// Exited says the child ended (an exit frame); for Ask, that the
	// conversation's child ended during the turn.
	Exited bool

	// How a conversation's turn ended (Ask), from its end frame.
	// Incomplete says the child asked for more input than the turn gave
	// (run -continuation) and was interrupted back to its prompt.
	Incomplete bool
	// Status is what the prompt's group "status" showed at the turn's
	// end (a shell's $?), if it showed a number; Prompt is every named
	// group of the prompt that took part.
	Status *int
	Prompt map[string]string
	// NotReady, set with TimedOut, says that the child had not been ready
	// since it started or since the turn before was interrupted, and
	// quotes its last line.
	NotReady string
	// Queued says the ask ended while it still waited for its turn (its
	// time limit, from the end frame, or its context): nothing of it was
	// written to the child, and no turn was interrupted for it.
	Queued bool
}
