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

// Cleaner cleans one terminal's output, call after call. The zero value
// is at the start of a line. It is not safe for concurrent use.
type Cleaner struct {
	esc   Escape
	shown bool // the current line has shown text
	crs   int  // carriage returns after text, held until the next byte tells
}

// Clean appends to dst what p shows, as far as it is known, and returns
// the extended slice.
func (c *Cleaner) Clean(dst, p []byte) []byte {
	for i := 0; i < len(p); {
		b := p[i]
		if c.esc.Active() {
			if c.esc.Take(b) {
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
			c.esc.Begin()
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
