package turn

import (
	"io"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// The prompt is looked for at the end of the current line, however long
// the line: the longest end of it that the expression matches, as
// re.Match(v[i:]) says for the least i. Trying each i would cost a match
// per byte of the line. For an expression anchored at both ends (^...$,
// as prompts are written), its matches in the ends of v are the matches
// of its reverse, read from the line's end backwards: one match, which
// stops as soon as the line's end cannot be the prompt's. Any other
// expression is matched forwards: where it matches v[lo:] it matches the
// longest end, and else only where its ^ can match, found with its ^
// matching anywhere, a few passes over v.

// ends finds the longest end of a line that re matches.
type ends struct {
	re *regexp.Regexp
	// rev is re reversed, its ^ dropped and its $ become ^, taking the
	// longest match: for re anchored at both ends. Else nil.
	rev *regexp.Regexp
	// any is re with its ^ matching anywhere, for re not anchored at both
	// ends (or re itself should its text not parse again, which it does).
	any  *regexp.Regexp
	back backward // rev's reader, kept so that a look allocates none
}

// endsOf prepares re, which may be nil (no continuation prompt).
func endsOf(re *regexp.Regexp) ends {
	e := ends{re: re}
	if re == nil {
		return e
	}
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		e.any = re
		return e
	}
	anchored := anchoredStart(tree) && anchoredEnd(tree)
	dropBegin(tree)
	if anchored {
		reverse(tree)
		if rev, err := regexp.Compile(tree.String()); err == nil {
			rev.Longest()
			e.rev = rev
			return e
		}
	}
	if e.any, err = regexp.Compile(tree.String()); err != nil {
		e.any = re
	}
	return e
}

// suffix is the start of the longest end of v, beginning at lo or later
// and not empty (but for an empty line), that is a prompt of either kind,
// or -1.
func (m *matcher) suffix(v []byte, lo int) int {
	at := m.promptEnds.longest(v, lo)
	if m.cont != nil {
		if c := m.contEnds.longest(v, lo); c >= 0 && (at < 0 || c < at) {
			at = c
		}
	}
	return at
}

// longest is the least i, lo <= i < len(v), such that e.re matches v[i:],
// or -1; for an empty v, 0 when lo is and e.re matches the empty line.
func (e *ends) longest(v []byte, lo int) int {
	switch {
	case e.re == nil || lo > len(v):
		return -1
	case len(v) == 0:
		if lo == 0 && e.re.Match(v) {
			return 0
		}
		return -1
	case lo == len(v):
		return -1
	}
	if e.rev != nil {
		e.back = backward{v: v, at: len(v), lo: lo}
		loc := e.rev.FindReaderIndex(&e.back)
		e.back.v = nil
		if loc == nil || loc[1] == 0 {
			return -1
		}
		if i := len(v) - loc[1]; e.re.Match(v[i:]) {
			return i
		}
		// A \b at the prompt's start saw the byte before it: look forwards.
		e.any = e.anyOf()
	}
	return forwards(e.re, e.any, v, lo)
}

// anyOf is e.any, made when first needed for an expression matched
// backwards.
func (e *ends) anyOf() *regexp.Regexp {
	if e.any != nil {
		return e.any
	}
	tree, err := syntax.Parse(e.re.String(), syntax.Perl)
	if err != nil {
		return e.re
	}
	dropBegin(tree)
	any, err := regexp.Compile(tree.String())
	if err != nil {
		return e.re
	}
	return any
}

// maxCandidates bounds the places forwards tries where re's unanchored
// form matches and re itself does not match what follows (a \b at its
// start sees the byte before, ^ in mid-expression): each costs a pass.
const maxCandidates = 16

// forwards is longest for any expression: re matches v[lo:], or else its
// matches in the ends of v begin where its ^ does, so the candidates are
// where any (re with ^ matching anywhere) matches, leftmost first, each
// checked with re itself.
func forwards(re, any *regexp.Regexp, v []byte, lo int) int {
	if re.Match(v[lo:]) {
		return lo
	}
	for from, n := lo+1, 0; from < len(v) && n < maxCandidates; n++ {
		loc := any.FindIndex(v[from:])
		if loc == nil || from+loc[0] >= len(v) {
			return -1
		}
		i := from + loc[0]
		if re.Match(v[i:]) {
			return i
		}
		from = i + 1
	}
	return -1
}

// backward reads v[lo:at] from its end, a character at a time.
type backward struct {
	v      []byte
	at, lo int
}

func (b *backward) ReadRune() (rune, int, error) {
	if b.at <= b.lo {
		return 0, 0, io.EOF
	}
	r, n := utf8.DecodeLastRune(b.v[b.lo:b.at])
	b.at -= n
	return r, n, nil
}

// anchoredStart reports whether every match of t begins with ^ (or \A).
func anchoredStart(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpBeginText, syntax.OpBeginLine:
		return true
	case syntax.OpConcat:
		return len(t.Sub) > 0 && anchoredStart(t.Sub[0])
	case syntax.OpCapture:
		return anchoredStart(t.Sub[0])
	case syntax.OpAlternate:
		for _, s := range t.Sub {
			if !anchoredStart(s) {
				return false
			}
		}
		return true
	}
	return false
}

// anchoredEnd reports whether every match of t ends with $ (or \z).
func anchoredEnd(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpEndText, syntax.OpEndLine:
		return true
	case syntax.OpConcat:
		return len(t.Sub) > 0 && anchoredEnd(t.Sub[len(t.Sub)-1])
	case syntax.OpCapture:
		return anchoredEnd(t.Sub[0])
	case syntax.OpAlternate:
		for _, s := range t.Sub {
			if !anchoredEnd(s) {
				return false
			}
		}
		return true
	}
	return false
}

// dropBegin makes every ^ and \A in t match the empty string.
func dropBegin(t *syntax.Regexp) {
	if t.Op == syntax.OpBeginText || t.Op == syntax.OpBeginLine {
		t.Op = syntax.OpEmptyMatch
	}
	for _, s := range t.Sub {
		dropBegin(s)
	}
}

// reverse makes t match the reverse of what it matched: its sequences
// and literals backwards, its ends swapped.
func reverse(t *syntax.Regexp) {
	switch t.Op {
	case syntax.OpLiteral:
		for i, j := 0, len(t.Rune)-1; i < j; i, j = i+1, j-1 {
			t.Rune[i], t.Rune[j] = t.Rune[j], t.Rune[i]
		}
	case syntax.OpConcat:
		for i, j := 0, len(t.Sub)-1; i < j; i, j = i+1, j-1 {
			t.Sub[i], t.Sub[j] = t.Sub[j], t.Sub[i]
		}
	case syntax.OpBeginText:
		t.Op = syntax.OpEndText
	case syntax.OpEndText:
		t.Op = syntax.OpBeginText
	case syntax.OpBeginLine:
		t.Op = syntax.OpEndLine
	case syntax.OpEndLine:
		t.Op = syntax.OpBeginLine
	}
	for _, s := range t.Sub {
		reverse(s)
	}
}
