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
// piece handed on), held until the tracker knows what they are. Its bytes
// are the Tracker's buf[hold:]. They may begin with a whole line before
// it, its newline included, whose fate waits on this one (see learn.go):
// its first pend runs, of which vis shows nothing.
type line struct {
	runs  []lrun
	n     int    // bytes held
	vis   []byte // what shows: the text less escape sequences, "\r" and "\n"
	crAt  int    // runs[crAt] is the first undecided "\r"; -1 when there is none
	start bool   // it begins at the start of a line, not after a piece handed on
	pend  int    // runs of the line before, held with this one
	last  []byte // the end of what the last line that showed anything showed
}

func (l *line) reset() {
	l.runs, l.n, l.vis, l.crAt, l.start, l.pend = l.runs[:0], 0, l.vis[:0], -1, true, 0
}

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

// text appends visible text.
func (l *line) text(p []byte) {
	l.decide(clCRText)
	l.add(clText, len(p))
	l.vis = append(l.vis, p...)
}

// cr appends a carriage return: one at the line's start moves nothing.
func (l *line) cr() {
	if len(l.vis) == 0 {
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
		l.keep()
		l.runs, l.n, l.vis, l.crAt = l.runs[:0], 0, l.vis[:0], -1
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
	if len(l.vis) == 0 {
		return
	}
	l.last = append(l.last[:0], lastOf(l.vis)...)
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

// shown is the number of held bytes up to and with the m-th byte of vis:
// where what follows it begins.
func (l *line) shown(m int) int {
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
