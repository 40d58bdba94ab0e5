package ttytext

// escState is where an Escape is in a terminal escape sequence.
type escState uint8

const (
	escNone      escState = iota
	escStart              // after ESC
	escInter              // ESC and intermediate bytes (ESC ( B)
	escCSI                // ESC [ and its parameters
	escString             // the body of OSC, DCS, SOS, PM or APC
	escStringEsc          // an ESC inside one: ST (ESC \) or a new sequence
)

// MaxString is the longest string sequence (a window title) taken as one:
// after it, or at a newline, what follows is text again.
const MaxString = 4096

// Escape follows one terminal escape sequence, byte by byte: the one
// recogniser of sequences that both package turn (a conversation's
// answers) and the Cleaner (a watch's output) use, so that both take the
// same bytes for noise. The zero value is outside any sequence.
type Escape struct {
	state  escState
	strLen int // bytes of the string sequence so far
}

// Begin starts a sequence: its ESC was just read.
func (e *Escape) Begin() { e.state = escStart }

// Active reports whether a sequence is under way.
func (e *Escape) Active() bool { return e.state != escNone }

// Take takes b inside a sequence (Active) and reports whether b is part
// of it; if not, the sequence is over and b is to be read as text.
func (e *Escape) Take(b byte) bool {
	switch e.state {
	case escStart:
		switch {
		case b == '[':
			e.state = escCSI
		case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
			e.state, e.strLen = escString, 0
		case b >= 0x20 && b <= 0x2f:
			e.state = escInter
		case b >= 0x30 && b <= 0x7e:
			e.state = escNone
		case b != 0x1b: // any other byte cancels the ESC
			e.state = escNone
			return false
		}
	case escInter:
		return e.final(b, 0x2f)
	case escCSI:
		return e.final(b, 0x3f)
	case escString:
		return e.stringByte(b)
	case escStringEsc:
		if b == '\\' {
			e.state = escNone
			return true
		}
		e.state = escStart // the ESC began a new sequence
		return e.Take(b)
	}
	return true
}

// final takes b in a sequence whose bytes up to last continue it and
// whose bytes from last+1 to '~' end it.
func (e *Escape) final(b, last byte) bool {
	switch {
	case b >= 0x20 && b <= last:
	case b > last && b <= 0x7e:
		e.state = escNone
	case b == 0x1b:
		e.state = escStart
	default:
		e.state = escNone
		return false
	}
	return true
}

// stringByte takes b in the body of a string sequence: BEL or ST ends it,
// CAN and SUB cancel it, a newline or excess length abandons it.
func (e *Escape) stringByte(b byte) bool {
	switch {
	case b == 0x07 || b == 0x18 || b == 0x1a:
		e.state = escNone
	case b == 0x1b:
		e.state = escStringEsc
	case b == '\n' || e.strLen >= MaxString:
		e.state = escNone
		return false
	default:
		e.strLen++
	}
	return true
}
