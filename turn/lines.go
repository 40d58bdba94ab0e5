package turn

import (
	"regexp"
	"time"
)

// Lines follows what a child's last line shows, as a Tracker's LastLine
// says it (carriage returns and escape sequences removed, at most
// MaxLastLine bytes), for a caller with no prompt to look for: one that
// quotes the last words of a child that could not start its program. It
// holds at most MaxHold bytes of a line and linesPiece more, and keeps
// what a line shows up to MaxHold bytes (not the tracker's maxLine: no
// prompt is matched against it).
type Lines struct{ t *Tracker }

// linesPiece is the most of a Write the tracker takes at once, so that
// what it holds stays small however large the writes.
const linesPiece = 1 << 10

// noPrompt matches nothing: a Lines' tracker stays busy, and hands every
// line on as output of no turn.
var noPrompt = regexp.MustCompile(`[^\x00-\x{10FFFF}]`)

// NewLines returns a Lines that has seen nothing.
func NewLines() *Lines {
	t, _ := New(Config{Prompt: noPrompt}) // New fails only without a prompt
	t.ln.max = MaxHold
	return &Lines{t: t}
}

// Write takes p, bytes the child wrote; p is not kept.
func (l *Lines) Write(p []byte) {
	for len(p) > 0 {
		n := min(len(p), linesPiece)
		l.t.Output(p[:n], time.Time{}) // no time passes: no prompt is looked for
		p = p[n:]
	}
}

// Last returns what the child's last line shows: the current line if it
// shows anything, else the last one that did, "" when none has. It is a
// copy.
func (l *Lines) Last() string { return string(l.t.LastLine()) }
