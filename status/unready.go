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
}

// What Unready.Since says.
const (
	SinceStart     = "it started"
	SinceInterrupt = "the turn before was interrupted"
)

// Message says, as of now, that the child has shown no prompt since u.At,
// and quotes its last line.
func (u *Unready) Message(now time.Time) string {
	msg := fmt.Sprintf("the child has shown no prompt matching %s since %s %s ago; ",
		quoteRegexp(u.Prompt), u.Since, ago(now.Sub(u.At)))
	if u.LastLine != "" {
		return msg + "its last line is " + strconv.Quote(u.LastLine)
	}
	return msg + "it has shown no line"
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
