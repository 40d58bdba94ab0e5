package turn

import "unicode/utf8"

// class is what a held byte is known to be so far.
type class uint8

const (
	clText   class = iota // the child's text
	clNoise               // an escape sequence, or a "\r" that moves nothing
	clCR                  // a "\r" in mid-line: noise if "\n" follows, else text
	clCRText              // a "\r" in mid-line that text followed: text that does not show
)

// lrun is a run of held bytes of one class.
type lrun struct {
	cls class
	n   int
}

// line is the current line: the bytes after the last newline (or the last
// piece handed on), held until the tracker knows what they are, and what
// the whole line shows. Its bytes are the Tracker's buf[hold:]. They may
// begin with a whole line before it, its newline included, whose fate
// waits on this one (see learn.go): its first pend runs, of which text
// shows nothing.
//
// text is what the line shows since its start, pieces handed on included
// (cut, flush), for the prompt to be matched against: the held bytes show
// text[off:] (vis). Only its last max bytes count (shows).
type line struct {
	runs    []lrun
	n       int    // bytes held
	text    []byte // what shows: the text less escape sequences, "\r" and "\n"
	off     int    // text[off:] is what the held bytes show
	dropped bool   // the start of text was dropped (max)
	max     int    // the most of text that counts: maxLine, or less for Lines
	crAt    int    // runs[crAt] is the first undecided "\r"; -1 when there is none
	start   bool   // the held bytes begin at the start of a line, not after a piece handed on
	pend    int    // runs of the line before, held with this one
	last    []byte // the end of what the last line that showed anything showed
}

// maxLine is the most of a line's text the prompt is matched against: its
// last maxLine bytes. It bounds what a line costs the tracker, as maxHeld
// bounds what an answer costs the conversation.
const maxLine = 1 << 20

// keepLineCap is the most capacity text keeps once a line ends: a tracker
// that once saw a very long line does not hold its buffer for good.
const keepLineCap = 4 * MaxHold

func (l *line) reset() {
	l.runs, l.n, l.crAt, l.pend = l.runs[:0], 0, -1, 0
	l.newLine()
}

// newLine forgets the line's text once the line is over (a newline, the
// prompt, a turn's start or end): the held bytes begin a new line. What
// it showed is kept as the last line.
func (l *line) newLine() {
	l.keep()
	if cap(l.text) > keepLineCap {
		l.text = nil
	}
	l.text, l.off, l.dropped, l.start = l.text[:0], 0, false, true
}

// vis is what the held bytes show.
func (l *line) vis() []byte { return l.text[l.off:] }

// shows is what the whole line shows, as far as the prompt is matched
// against it: at most its last max bytes.
func (l *line) shows() []byte {
	if len(l.text) > l.max {
		return l.text[len(l.text)-l.max:]
	}
	return l.text
}

// cutShort reports whether shows has lost the line's start.
func (l *line) cutShort() bool { return l.dropped || len(l.text) > l.max }

// heldOf turns n, a count of the first bytes of shows, into the count of
// them that the held bytes show (vis): 0 or less when all were handed on.
func (l *line) heldOf(n int) int { return n + len(l.text) - len(l.shows()) - l.off }

// skip forgets the first m bytes of text, which showed at the line's
// start and were handed on: what follows is the line.
func (l *line) skip(m int) {
	l.text = l.text[:copy(l.text, l.text[m:])]
	l.off = max(l.off-m, 0)
}

// sent notes that what the held bytes show was handed on, the line going
// on: the bytes left held show nothing.
func (l *line) sent() { l.off = len(l.text) }

// add appends n bytes of class c.
func (l *line) add(c class, n int) {
	if k := len(l.runs); k > l.pend && l.runs[k-1].cls == c {
		l.runs[k-1].n += n
	} else {
		if c == clCR && l.crAt < 0 {
			l.crAt = len(l.runs)
		}
		l.runs = append(l.runs, lrun{cls: c, n: n})
	}
	l.n += n
}

// shown appends visible text.
func (l *line) shown(p []byte) {
	l.decide(clCRText)
	l.add(clText, len(p))
	l.text = append(l.text, p...)
	if len(l.text) > l.max+l.max/4 { // not at each append: that would copy max bytes each time
		n := len(l.text) - l.max // what is held, at most MaxHold, stays
		l.text = l.text[:copy(l.text, l.text[n:])]
		l.off -= n
		l.dropped = true
	}
}

// cr appends a carriage return: one before anything the line shows moves
// nothing.
func (l *line) cr() {
	if len(l.text) == 0 {
		l.add(clNoise, 1)
		return
	}
	l.add(clCR, 1)
}

// decide makes the undecided carriage returns c.
func (l *line) decide(c class) {
	if l.crAt < 0 {
		return
	}
	for i := l.crAt; i < len(l.runs); i++ {
		if l.runs[i].cls == clCR {
			l.runs[i].cls = c
		}
	}
	l.crAt = -1
}

// drop removes the first k runs, of n bytes, once they are handed on.
func (l *line) drop(k, n int) {
	l.pend = max(l.pend-k, 0)
	if k == len(l.runs) {
		l.runs, l.n, l.crAt = l.runs[:0], 0, -1
		l.sent()
		return
	}
	l.runs = l.runs[:copy(l.runs, l.runs[k:])]
	l.n -= n
	if l.crAt >= 0 {
		l.crAt -= k
	}
}

// keep notes what the line shows, if anything, as the last line the child
// wrote, before it is forgotten.
func (l *line) keep() {
	if len(l.text) == 0 {
		return
	}
	l.last = append(l.last[:0], lastOf(l.text)...)
}

// split makes n, a count of held bytes, fall between two runs, and returns
// the number of runs before it.
func (l *line) split(n int) int {
	for k, at := 0, 0; k < len(l.runs); k++ {
		r := l.runs[k]
		switch {
		case at+r.n == n:
			return k + 1
		case at+r.n > n:
			l.runs = append(l.runs, lrun{})
			copy(l.runs[k+1:], l.runs[k:])
			l.runs[k].n, l.runs[k+1].n = n-at, r.n-(n-at)
			if l.crAt > k {
				l.crAt++
			}
			return k + 1
		}
		at += r.n
	}
	return len(l.runs)
}

// upTo is the number of held bytes up to and with the m-th byte of vis:
// where what follows it begins.
func (l *line) upTo(m int) int {
	if m == 0 {
		return 0
	}
	at, seen := 0, 0
	for _, r := range l.runs {
		if r.cls == clText {
			if seen+r.n >= m {
				return at + m - seen
			}
			seen += r.n
		}
		at += r.n
	}
	return at
}

// Tail is the end of v that a message quotes, bounded as LastLine is:
// at most MaxLastLine bytes, begun at a character's start when v is cut.
func Tail(v []byte) []byte { return lastOf(v) }

// lastOf is the end of v that LastLine shows: at most MaxLastLine bytes,
// begun at a character's start when v is cut.
func lastOf(v []byte) []byte {
	if len(v) <= MaxLastLine {
		return v
	}
	v = v[len(v)-MaxLastLine:]
	for k := 0; k < utf8.UTFMax-1 && len(v) > 0 && !utf8.RuneStart(v[0]); k++ {
		v = v[1:]
	}
	return v
}
