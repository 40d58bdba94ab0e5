package turn

// special marks the bytes the scanner stops at: the rest is plain text.
var special = [256]bool{'\n': true, '\r': true, 0x1b: true}

// scan classifies buf[i:], the bytes just given, into the current line,
// handing lines on as they end.
func (t *Tracker) scan(i int) {
	for i < len(t.buf) {
		switch c := t.buf[i]; {
		case t.esc.Active() && t.esc.Take(c):
			t.ln.add(clNoise, 1)
			i++
		case t.esc.Active(): // the sequence ended before c: c is read afresh
		case c == '\n':
			t.ln.decide(clNoise)
			t.ln.add(clText, 1) // in no run of vis: it ends the line
			i++
			t.lineEnd()
		case c == '\r':
			t.ln.cr()
			i++
		case c == 0x1b:
			t.esc.Begin()
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
