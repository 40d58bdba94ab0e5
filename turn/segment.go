package turn

import "strconv"

// Kind is what a stretch of the child's output is to the turns.
type Kind uint8

const (
	// Answer is part of the current turn's answer.
	Answer Kind = iota + 1
	// Noise is output inside a turn's answer that the answer leaves out:
	// in terminal mode, escape sequences and the carriage returns of
	// "\r\n" and at a line's start.
	Noise
	// Echo is the echo of the turn's input, with the prompts shown on its
	// lines.
	Echo
	// Prompt is the last line, shown when the child became ready.
	Prompt
	// Discarded is output that belongs to no turn: before the first prompt,
	// between turns, and after an abandoned turn until the next prompt.
	Discarded
	// End has no bytes: the turn in progress ended here, at a prompt or
	// after its quiet time, and the child is ready.
	End
	// Incomplete has no bytes: the turn in progress ended here, at the
	// continuation prompt (Config.Continuation) after the whole input: the
	// child wants more. It is busy until it shows its prompt again; the
	// caller interrupts it.
	Incomplete
)

var kindNames = [...]string{Answer: "answer", Noise: "noise", Echo: "echo", Prompt: "prompt", Discarded: "discarded",
	End: "end", Incomplete: "incomplete"}

// ends reports whether k ends a turn: End or Incomplete, which have no
// bytes.
func (k Kind) ends() bool { return k == End || k == Incomplete }

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Segment is a stretch of the child's output and what it is. Data belongs
// to the Tracker and is valid until its next call; it is empty for End and
// Incomplete.
type Segment struct {
	Kind Kind
	Data []byte
}
