package turn

// span is a segment while a call is under way: offsets into buf, which may
// still move as it grows.
type span struct {
	kind     Kind
	from, to int
}

// begin starts a call: the segments of the last call are forgotten and the
// current line moves to the front of buf.
func (t *Tracker) begin() {
	t.atKnown = false
	if t.hold > 0 {
		t.buf = t.buf[:copy(t.buf, t.buf[t.hold:])]
		t.hold = 0
	}
	t.spans = t.spans[:0]
}

// emit adds buf[from:to] as kind, joining it to the span before when it is
// of the same kind.
func (t *Tracker) emit(kind Kind, from, to int) {
	if from == to && !kind.ends() {
		return
	}
	if k := len(t.spans) - 1; k >= 0 && !kind.ends() && t.spans[k].kind == kind && t.spans[k].to == from {
		t.spans[k].to = to
		return
	}
	t.spans = append(t.spans, span{kind: kind, from: from, to: to})
}

// release hands on the current line's first k runs as fate; an answer's
// noise is Noise in terminal mode.
func (t *Tracker) release(k int, fate Kind) {
	at := t.hold
	for _, r := range t.ln.runs[:k] {
		kind := fate
		if fate == Answer && r.cls == clNoise && t.terminal {
			kind = Noise
		}
		t.emit(kind, at, at+r.n)
		at += r.n
	}
	t.ln.drop(k, at-t.hold)
	t.hold = at
}

// result is the call's segments, valid until the next call.
func (t *Tracker) result() []Segment {
	if len(t.spans) == 0 {
		return nil
	}
	t.segs = t.segs[:0]
	for _, s := range t.spans {
		seg := Segment{Kind: s.kind}
		if !s.kind.ends() {
			seg.Data = t.buf[s.from:s.to:s.to]
		}
		t.segs = append(t.segs, seg)
	}
	return t.segs
}
