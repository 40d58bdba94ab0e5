package protocol

import (
	"fmt"
	"regexp/syntax"
)

// A prompt or continuation that an open line gives is compiled by the
// agent's control loop, which every open, close and list waits behind.
// Compiling costs time and memory in the size of the program it makes,
// which repeats multiply: 33 KB of "[a-y]{1000}" take most of a second
// and hundreds of megabytes. So a line's patterns are bounded before
// anything compiles them: in length, and in the instructions their
// program would have, as counted from the parsed expression.
const (
	// maxPattern is the longest prompt or continuation an open line may
	// give, in bytes.
	maxPattern = 1024
	// maxPatternInsts bounds the instructions of a pattern's program, as
	// patternInsts counts them: enough for any prompt (".{0,200}" is
	// about 400), and quick to compile (well under a millisecond).
	maxPatternInsts = 5000
)

// checkPattern refuses a prompt or continuation (what names which) that
// is too long or would compile into too large a program. A pattern that
// does not parse passes: its compile reports that as it always did.
func checkPattern(what, expr string) error {
	if len(expr) > maxPattern {
		return fmt.Errorf("invalid %s: %d bytes, at most %d", what, len(expr), maxPattern)
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	if patternInsts(re) > maxPatternInsts {
		return fmt.Errorf("invalid %s %q: its program would be too large (repeats multiply it; at most %d instructions)",
			what, expr, maxPatternInsts)
	}
	return nil
}

// patternInsts counts, roughly and from above, the instructions of the
// program re compiles into: a repeat {n,m} copies its operand max(n,m)
// times. The count stops growing past maxPatternInsts.
func patternInsts(re *syntax.Regexp) int {
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		n = len(re.Rune)
	case syntax.OpRepeat:
		times := max(re.Min, re.Max, 1)
		n = min(times*(patternInsts(re.Sub[0])+1), maxPatternInsts+1)
	default:
		for _, sub := range re.Sub {
			n += patternInsts(sub)
		}
	}
	return min(n, maxPatternInsts+1)
}
