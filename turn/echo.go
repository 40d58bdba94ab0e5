package turn

import "bytes"

// echoState is how far the echo of a turn's input has been seen.
type echoState uint8

const (
	echoNone  echoState = iota // none is looked for
	echoFirst                  // the turn's first line says whether there is one
	echoSeen                   // it has begun
)

// echoExpect is the echo of a turn's input still to be seen. A terminal
// echoes each input line as the child reads it, so the echo of a later line
// may follow a prompt of the child's ("... " or "> "), or answer lines of
// the line before.
type echoExpect struct {
	form  []byte // the input's lines as they show when echoed, newlines left out
	ends  []int  // form[ends[i-1]:ends[i]] is line i
	next  int    // the next line to be seen
	part  int    // bytes of line next seen already, on a line the terminal wrapped
	state echoState
	after bool // the last line handed on was echo
}

// reset expects the echo of input's complete lines (none when !on).
func (e *echoExpect) reset(input []byte, on, terminal bool) {
	e.form, e.ends = e.form[:0], e.ends[:0]
	e.next, e.part, e.after, e.state = 0, 0, false, echoNone
	for _, c := range input {
		switch {
		case c == '\n' || c == '\r' && terminal: // a terminal reads "\r" as "\n"
			e.ends = append(e.ends, len(e.form))
		case terminal && (c < 0x20 && c != '\t' || c == 0x7f):
			e.form = append(e.form, '^', c^0x40) // as the terminal echoes it (ECHOCTL)
		default:
			e.form = append(e.form, c)
		}
	}
	if on && len(e.ends) > 0 {
		e.state = echoFirst
	}
}

// count is the number of complete lines in the input.
func (e *echoExpect) count() int { return len(e.ends) }

// pending reports whether the echo has begun and lines of it are still to
// come: the child has not read all of its input yet.
func (e *echoExpect) pending() bool { return e.state == echoSeen && e.next < len(e.ends) }

// line is the part of the next input line still to be seen.
func (e *echoExpect) line() []byte {
	return e.lineAt(e.next)[e.part:]
}

// lineAt is input line i as its echo shows.
func (e *echoExpect) lineAt(i int) []byte {
	from := 0
	if i > 0 {
		from = e.ends[i-1]
	}
	return e.form[from:e.ends[i]]
}

// bare reports whether v, a whole output line, is the input's first line,
// where the turn's first output line would be its echo.
func (e *echoExpect) bare(v []byte) bool {
	return e.state == echoFirst && len(e.ends) > 0 && bytes.Equal(v, e.lineAt(0))
}

// seen notes that the echo of the input's first line was seen.
func (e *echoExpect) seen() {
	e.next, e.part = 1, 0
	e.state, e.after = echoSeen, true
}

// nextEcho reports whether v, a whole output line, is the echo of the
// input's second line, bare or after a prompt.
func (e *echoExpect) nextEcho(v []byte, m *matcher) bool {
	if len(e.ends) < 2 {
		return false
	}
	want := e.lineAt(1)
	return bytes.Equal(v, want) || len(v) > len(want) && bytes.HasSuffix(v, want) && contPrompt(v[:len(v)-len(want)], m, true)
}

// match reports whether v, what shows of an output line (whole) or of a
// piece of one, is the echo of the next input line, and whether a prompt
// came before it. The echo may be v itself, when it comes first in the turn
// or right after more echo; a prompt followed by it; on a terminal, the
// start of it, the line wrapped at the terminal's width; or readline's
// horizontally scrolled view, "<" and its end.
func (e *echoExpect) match(v []byte, whole, start bool, m *matcher, terminal bool) (ok, prompted bool) {
	if e.state == echoNone || e.next >= len(e.ends) {
		return false, false
	}
	want, cont := e.line(), e.part > 0
	if !start && !cont {
		return false, false // the rest of a line that was not echo
	}
	bare := e.state == echoFirst || e.after || cont
	switch {
	case !whole && len(v) == 0:
		return true, false // a piece that shows nothing
	case whole && bare && bytes.Equal(v, want):
	case whole && !cont && len(v) > len(want) && bytes.HasSuffix(v, want) && contPrompt(v[:len(v)-len(want)], m, e.next > 0):
		prompted = true
	case bare && len(v) > 0 && bytes.HasPrefix(want, v) && (!whole || terminal && len(v) < len(want)):
		e.part += len(v)
		e.state, e.after = echoSeen, true
		return true, false
	case whole && terminal && len(v) > 1 && v[0] == '<' && bytes.HasSuffix(want, v[1:]):
	default:
		e.miss()
		return false, false
	}
	e.next, e.part = e.next+1, 0
	e.state, e.after = echoSeen, true
	return true, prompted
}

// miss notes a line that is not echo. If it is the turn's first, no echo
// is looked for in this turn; a wrapped line whose rest did not follow is
// given up.
func (e *echoExpect) miss() {
	if e.state == echoFirst {
		e.state = echoNone
		return
	}
	e.after = false
	if e.part > 0 {
		e.next, e.part = e.next+1, 0
	}
}

// maxContPrompt is the longest continuation prompt taken as one without
// the prompt expression's say.
const maxContPrompt = 32

// contPrompt reports whether p, what shows before the echo of an input
// line, is a prompt of the child's: one the expressions match, or, before
// a later line, a continuation prompt they need not match ("... ",
// "   ...> ", "> "): at most maxContPrompt bytes of punctuation and spaces
// that end with a space. A continuation prompt with letters or digits in
// it must be matched by an expression.
func contPrompt(p []byte, m *matcher, later bool) bool {
	if m.isPrompt(p) {
		return true
	}
	if !later || len(p) > maxContPrompt || p[len(p)-1] != ' ' {
		return false
	}
	for _, c := range p {
		if c <= ' ' && c != ' ' || c >= 0x7f || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z' {
			return false
		}
	}
	return true
}
