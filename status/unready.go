//go:build linux

package status

import (
	"fmt"
	"strconv"
	"time"
)

// Unready says that a conversation's child has shown no prompt since a
// moment: its start, or a turn that was interrupted. The agent puts it in
// the status file's turn (and, as a message, into the end frame of an ask
// past its limit); an ask that is interrupted reads it there, so that both
// say, in the same words, why the child did not answer.
type Unready struct {
	// Since is what happened at At: "it started", or "the turn before was
	// interrupted".
	Since string    `json:"since"`
	At    time.Time `json:"at"`
	// Prompt is the -prompt expression; LastLine the child's last line
	// that showed anything (escapes removed, at most 80 bytes), "" when
	// it has shown none.
	Prompt   string `json:"prompt"`
	LastLine string `json:"last_line"`
	// Incomplete says the turn before ended incomplete (-continuation):
	// the child asked for more input and was interrupted, and a child
	// that keeps an unfinished input through the interrupt (sqlite3)
	// waits for the rest of it, which fifobridge type can give.
	Incomplete bool `json:"incomplete,omitempty"`
	// Input is that turn's input, as the message quotes it (at most its
	// last 80 bytes). Only the agent's message to a later ask carries
	// it: it is never written to the status file, which users who may
	// not ask can read.
	Input string `json:"-"`
}

// What Unready.Since says.
const (
	SinceStart     = "it started"
	SinceInterrupt = "the turn before was interrupted"
)

// Message says, as of now, that the child has shown no prompt since u.At,
// and quotes its last line; after an incomplete turn it names that
// turn's input, when known, and fifobridge type as the way to finish it.
func (u *Unready) Message(now time.Time) string {
	msg := fmt.Sprintf("the child has shown no prompt matching %s since %s %s ago; ",
		quoteRegexp(u.Prompt), u.Since, ago(now.Sub(u.At)))
	if u.LastLine != "" {
		msg += "its last line is " + strconv.Quote(u.LastLine)
	} else {
		msg += "it has shown no line"
	}
	if !u.Incomplete {
		return msg
	}
	input := ""
	if u.Input != "" {
		input = ", " + strconv.Quote(u.Input) + ","
	}
	return msg + "; the input of the turn before" + input +
		" was incomplete and the child may still hold it: finish it with fifobridge type"
}

// quoteRegexp quotes a prompt expression as a shell user would write it,
// in single quotes, unless it holds one.
func quoteRegexp(re string) string {
	for _, r := range re {
		if r == '\'' || r < ' ' || r == 0x7f {
			return strconv.Quote(re)
		}
	}
	return "'" + re + "'"
}

// ago rounds d for a person: to a tenth of a second, to a second from a
// minute on.
func ago(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
