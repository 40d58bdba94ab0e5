package turn

// escState is where the scanner is in a terminal escape sequence.
type escState uint8

const (
	escNone      escState = iota
	escStart              // after ESC
	escInter              // ESC and intermediate bytes (ESC ( B)
	escCSI                // ESC [ parameters
	escString             // the body of OSC, DCS, SOS, PM or APC
	escStringEsc          // ESC inside a string: ST (ESC \) or a new sequence
)

// maxString is the longest string sequence (a window title, say) taken as
// one: after it, or at a newline, what follows counts as text again.
const maxString = 4096

// special marks the bytes the scanner stops at: the rest is plain text.
var special = [256]bool{'\n': true, '\r': true, 0x1b: true}

// scan classifies buf[i:], the bytes just given, into the current line,
// handing lines on as they end.
func (t *Tracker) scan(i int) {
	for i < len(t.buf) {
		switch c := t.buf[i]; {
		case t.esc != escNone && t.escape(c):
			t.ln.add(clNoise, 1)
			i++
		case t.esc != escNone: // the sequence ended before c: c is read afresh
		case c == '\n':
			t.ln.decide(clNoise)
			t.ln.add(clText, 1) // in no run of vis: it ends the line
			i++
			t.lineEnd()
		case c == '\r':
			t.ln.cr()
			i++
		case c == 0x1b:
			t.esc = escStart
			t.ln.add(clNoise, 1)
			i++
		default:
			j, end := i+1, min(len(t.buf), i+MaxHold-t.ln.n)
			for j < end && !special[t.buf[j]] {
				j++
			}
			t.ln.shown(t.buf[i:j])
			i = j
		}
		if t.ln.n >= MaxHold {
			t.cut()
		}
	}
}

// escape takes c inside an escape sequence. It reports whether c is part of
// the sequence; if not, the sequence is over and c is to be read as text.
func (t *Tracker) escape(c byte) bool {
	switch t.esc {
	case escStart:
		switch {
		case c == '[':
			t.esc = escCSI
		case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
			t.esc, t.strLen = escString, 0
		case c >= 0x20 && c <= 0x2f:
			t.esc = escInter
		case c >= 0x30 && c <= 0x7e:
			t.esc = escNone
		case c != 0x1b: // a control character cancels the ESC
			t.esc = escNone
			return false
		}
	case escInter:
		return t.final(c, 0x2f)
	case escCSI:
		return t.final(c, 0x3f)
	case escString:
		return t.stringByte(c)
	case escStringEsc:
		if c == '\\' {
			t.esc = escNone
			return true
		}
		t.esc = escStart // the ESC began a new sequence
		return t.escape(c)
	}
	return true
}

// final takes c in a sequence whose bytes up to last continue it and whose
// bytes from last+1 to '~' end it.
func (t *Tracker) final(c, last byte) bool {
	switch {
	case c >= 0x20 && c <= last:
	case c > last && c <= 0x7e:
		t.esc = escNone
	case c == 0x1b:
		t.esc = escStart
	default:
		t.esc = escNone
		return false
	}
	return true
}

// stringByte takes c in the body of a string sequence: BEL or ST ends it,
// CAN and SUB cancel it, a newline or excess length abandons it.
func (t *Tracker) stringByte(c byte) bool {
	switch {
	case c == 0x07 || c == 0x18 || c == 0x1a:
		t.esc = escNone
	case c == 0x1b:
		t.esc = escStringEsc
	case c == '\n' || t.strLen >= maxString:
		t.esc = escNone
		return false
	default:
		t.strLen++
	}
	return true
}
