package turn

// echoMode is how the tracker looks for the echo of a turn's input.
type echoMode uint8

const (
	echoNever  echoMode = iota // EchoOff
	echoAlways                 // a terminal's echo, or EchoOn, or a child that has shown it echoes
	echoLearn                  // EchoAuto on pipes: the child has not yet shown that it echoes
)

// A child on pipes that echoes its input itself (bash -i with readline,
// sqlite3 -interactive) shows a turn's first input line as the first line
// of its output; so does a child that does not echo but answers "42" to
// "42" (python3, bc). Until the child has shown that it echoes, such a
// line is held, and what follows it tells:
//
//   - more output before the prompt (an answer line, output that did not
//     end its line, a piece of a long line), or the echo of the input's
//     second line, bare or after a prompt: the line was echo, and the child
//     echoes; from then on its echo is removed as on a terminal;
//   - the turn's end, at the prompt or otherwise, with nothing more, or a
//     prompt for the input's next line that is not followed by its echo:
//     the line was the answer (python3's "42", its ">>> 2" after "1" for
//     "1\nprint(2)\n"), and nothing is learnt.
//
// So a child that echoes keeps the echo in the answers of its turns that
// print nothing (bash's "true") until one turn prints something; a child
// that does not echo loses a line only when it answers a line with that
// line and then more output, as no REPL does.

// holdLine holds the current line, which has just ended and shows the
// turn's first input line, with the next: its fate waits on that line.
func (t *Tracker) holdLine() {
	t.ln.pend = len(t.ln.runs)
	t.ln.newLine()
}

// resolve hands on the held line, if there is one, as echo or answer, from
// v, what shows of what followed it: the next line (whole), or a piece of
// it, or what came before the prompt or the turn's end.
func (t *Tracker) resolve(v []byte, whole bool) {
	if t.ln.pend == 0 {
		return
	}
	k := t.ln.pend
	if t.echoed(v, whole) {
		t.echo = echoAlways
		t.exp.seen()
		t.release(k, Echo)
		t.fresh = false
		return
	}
	t.exp.miss()
	t.release(k, Answer)
	t.fresh = true
}

// echoed reports whether the held line was echo, from v (see resolve).
func (t *Tracker) echoed(v []byte, whole bool) bool {
	switch {
	case !whole && len(v) == 0:
		return false // nothing but the turn's end followed
	case whole && t.exp.nextEcho(v, &t.m):
		return true
	case t.owed > 0 && t.m.prefix(v, maxOwedScan) > 0:
		return false // a prompt for the next line, and no echo of it
	}
	return true
}
