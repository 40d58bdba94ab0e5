package turn

import "bytes"

// A turn's last line need not end for its answer to go on: the question a
// command asks and then waits on ("Enter name: ", "Proceed? [Y/n] "), a
// progress line, output that pauses before its newline. Once the child
// has been quiet for the settle period (or the caller sees it wait for
// input: Settle) and the line is not the prompt, what it shows so far is
// handed on, and the turn goes on. The line's text stays, for the prompt
// to be matched against all of it once more comes; what was handed on
// stays handed on, whatever it turns out to be.

// flush hands on the unfinished last line of the turn in progress, quiet
// and not the prompt (see above): all of it but the carriage returns at
// its end, which may yet be the start of a "\r\n".
func (t *Tracker) flush() {
	if !t.unfinished() {
		return
	}
	if t.ln.pend > 0 { // what follows the held line decides it now
		t.resolve(t.ln.vis(), false)
	}
	k := len(t.ln.runs)
	if t.ln.crAt >= 0 {
		k = t.ln.crAt
	}
	if k == 0 {
		return
	}
	t.place(k, false)
	t.ln.sent()
	t.ln.start = t.ln.start && len(t.ln.text) == 0 // only prompts owed were handed on
}

// unfinished reports whether the turn in progress has an unfinished last
// line that flush would hand on: it shows something not yet handed on,
// the input's echo is not still to come (the child has not read all its
// input), and it is not the start of the input's first line on a child
// not yet known to echo, which may be its echo (learn.go).
func (t *Tracker) unfinished() bool {
	v := t.ln.vis()
	switch {
	case t.state != stTurn || len(v) == 0 || t.exp.pending():
		return false
	case t.echo == echoLearn && t.exp.state == echoFirst && t.ln.start && bytes.HasPrefix(t.exp.lineAt(0), v):
		return false
	}
	return true
}
