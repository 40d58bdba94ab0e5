// Package ttytext turns what a terminal gives into the text it shows, as
// a conversation's answer shows it (package turn's terminal mode): escape
// sequences are removed, and so are the carriage returns of "\r\n" and
// those at a line's start, where they move nothing; every other byte is
// kept, in order. It is for a stream that is never held back: a Cleaner
// hands every byte on as soon as it knows what it is, and holds only the
// carriage returns whose fate the next byte decides (their count), and
// where it is in an escape sequence.
//
// Guarantees: Clean never adds a byte or reorders them; its output holds
// no ESC byte and no "\r\n". Text cut into calls anywhere gives the same
// output as in one call. It is pure: no I/O, no goroutine, no clock.
package ttytext

// escState is where the Cleaner is in an escape sequence.
type escState uint8

const (
	escNone      escState = iota
	escStart              // after ESC
	escInter              // ESC and intermediate bytes (ESC ( B)
	escCSI                // ESC [ and its parameters
	escString             // the body of OSC, DCS, SOS, PM or APC
	escStringEsc          // an ESC inside one: ST (ESC \) or a new sequence
)

// maxString is the longest string sequence (a window title) taken as one:
// after it, or at a newline, what follows is text again. It is package
// turn's.
const maxString = 4096

// Cleaner cleans one terminal's output, call after call. The zero value
// is at the start of a line. It is not safe for concurrent use.
type Cleaner struct {
	esc    escState
	strLen int  // bytes of the string sequence so far
	shown  bool // the current line has shown text
	crs    int  // carriage returns after text, held until the next byte tells
}

// Clean appends to dst what p shows, as far as it is known, and returns
// the extended slice.
func (c *Cleaner) Clean(dst, p []byte) []byte {
	for i := 0; i < len(p); {
		b := p[i]
		if c.esc != escNone {
			if c.escape(b) {
				i++
				continue
			}
			// The sequence ended before b, which is read afresh.
		}
		switch b {
		case '\n':
			c.crs, c.shown = 0, false // the "\r" of "\r\n" shows nothing
			dst = append(dst, '\n')
		case '\r':
			if c.shown {
				c.crs++
			} // at a line's start it moves nothing
		case 0x1b:
			c.esc = escStart
		default:
			j := i + 1
			for j < len(p) && p[j] != '\n' && p[j] != '\r' && p[j] != 0x1b {
				j++
			}
			dst = c.text(dst, p[i:j])
			i = j
			continue
		}
		i++
	}
	return dst
}

// Flush appends what is held at the end of the output: carriage returns
// that text came before, which show as text does, as package turn hands
// them on at its end.
func (c *Cleaner) Flush(dst []byte) []byte {
	for ; c.crs > 0; c.crs-- {
		dst = append(dst, '\r')
	}
	return dst
}

// text appends visible text, after the carriage returns it makes text.
func (c *Cleaner) text(dst, p []byte) []byte {
	dst = c.Flush(dst)
	c.shown = true
	return append(dst, p...)
}

// escape takes b inside an escape sequence and reports whether b is part
// of it; if not, the sequence is over and b is to be read as text.
func (c *Cleaner) escape(b byte) bool {
	switch c.esc {
	case escStart:
		switch {
		case b == '[':
			c.esc = escCSI
		case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
			c.esc, c.strLen = escString, 0
		case b >= 0x20 && b <= 0x2f:
			c.esc = escInter
		case b >= 0x30 && b <= 0x7e:
			c.esc = escNone
		case b != 0x1b: // any other byte cancels the ESC
			c.esc = escNone
			return false
		}
	case escInter:
		return c.final(b, 0x2f)
	case escCSI:
		return c.final(b, 0x3f)
	case escString:
		return c.stringByte(b)
	case escStringEsc:
		if b == '\\' {
			c.esc = escNone
			return true
		}
		c.esc = escStart // the ESC began a new sequence
		return c.escape(b)
	}
	return true
}

// final takes b in a sequence whose bytes up to last continue it and
// whose bytes from last+1 to '~' end it.
func (c *Cleaner) final(b, last byte) bool {
	switch {
	case b >= 0x20 && b <= last:
	case b > last && b <= 0x7e:
		c.esc = escNone
	case b == 0x1b:
		c.esc = escStart
	default:
		c.esc = escNone
		return false
	}
	return true
}

// stringByte takes b in the body of a string sequence: BEL or ST ends it,
// CAN and SUB cancel it, a newline or excess length abandons it.
func (c *Cleaner) stringByte(b byte) bool {
	switch {
	case b == 0x07 || b == 0x18 || b == 0x1a:
		c.esc = escNone
	case b == 0x1b:
		c.esc = escStringEsc
	case b == '\n' || c.strLen >= maxString:
		c.esc = escNone
		return false
	default:
		c.strLen++
	}
	return true
}
