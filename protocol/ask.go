package protocol

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fifobridge/fifobridge/internal/jsonstr"
)

// Frame types of a conversation's turn (fifobridge ask), besides exit and
// error, which mean there what they mean in exec mode.
const (
	FrameAnswer = "answer"
	FrameEnd    = "end"
)

// Ask is one turn asked of a conversation's child (run -prompt), as one
// JSON object on one line of DIR/ask. Reply is required: an ask is
// answered on its own reply FIFO only.
type Ask struct {
	ID      string `json:"id,omitempty"`
	Reply   string `json:"reply,omitempty"`
	Input   string `json:"input"`
	Timeout string `json:"timeout,omitempty"`
	Quiet   string `json:"quiet,omitempty"`
}

// ParsedAsk is an ask line understood: its time limit and quiet time as
// durations (0: none given).
type ParsedAsk struct {
	Ask
	Limit time.Duration
	Quiet time.Duration
}

// ParseAsk reads one line of DIR/ask (without its newline). On error the
// returned ask still carries the id and reply the line named, as far as
// they could be read and are valid, so that the error reaches its sender.
// A line that may hold another writer's bytes is refused with an error
// that wraps ErrDamaged, as ParseRequest refuses it.
func ParseAsk(line []byte) (ParsedAsk, error) {
	var a ParsedAsk
	ask, err := decodeLine[Ask](line, "ask")
	if err != nil {
		a.ID, a.Reply = SalvageHead(line)
		return a, err
	}
	a.Ask = ask
	r := Request{ID: a.ID, Reply: a.Reply}
	err = checkHead(&r)
	a.ID, a.Reply = r.ID, r.Reply
	if err != nil {
		return a, err
	}
	if a.Reply == "" {
		return a, errors.New("invalid ask: it names no reply fifo")
	}
	if a.Limit, err = positive("timeout", a.Timeout); err != nil {
		return a, err
	}
	if a.Quiet, err = positive("quiet", a.Ask.Quiet); err != nil {
		return a, err
	}
	return a, nil
}

// positive parses an optional positive duration field.
func positive(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid %s %q: want a positive duration such as 5s", field, s)
	}
	return d, nil
}

// End is how a turn ended without its child ending: at a prompt (or after
// its quiet time), at a continuation prompt (incomplete), or past its time
// limit.
type End struct {
	TimedOut bool
	// Queued, with TimedOut, says the ask's limit came while it still
	// waited for its turn: nothing was written to the child, and no turn
	// was interrupted for it.
	Queued bool
	// Incomplete says the child asked for more input than the turn gave
	// (run -continuation), and was interrupted back to its prompt.
	Incomplete bool
	// Prompt is the named groups of the -prompt expression in the prompt
	// that ended the turn, in the expression's order.
	Prompt []PromptGroup
	// Status is the number the group "status" showed, if it showed one.
	Status *int
	// NotReady, if set, names a child that has not been ready since it
	// started or since the turn before it was interrupted, with its last
	// line: why a turn past its limit never began, or never ended.
	NotReady   string
	DurationMS int64
}

// PromptGroup is a named group of the prompt expression and its text.
type PromptGroup struct {
	Name, Text string
}

// AppendEnd appends the one end frame of a turn whose child is still
// there, and a newline: "ready":true unless it timed out or was
// incomplete, "queued":true for an ask that timed out before its turn,
// then "status" and "prompt" when there are any, the prompt's groups in
// their order, and "not_ready" when set. A name, text or message
// that is not valid UTF-8 has its bad bytes replaced; a name seen before
// is left out (JSON wants each key once).
func AppendEnd(b []byte, id string, e End) []byte {
	b = appendHead(b, id, FrameEnd)
	if e.TimedOut {
		b = append(b, `,"timed_out":true`...)
	}
	if e.Queued {
		b = append(b, `,"queued":true`...)
	}
	if e.Incomplete {
		b = append(b, `,"incomplete":true`...)
	}
	if !e.TimedOut && !e.Incomplete {
		b = append(b, `,"ready":true`...)
	}
	if e.Status != nil {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(*e.Status), 10)
	}
	if len(e.Prompt) > 0 {
		b = appendPrompt(b, e.Prompt)
	}
	if e.NotReady != "" {
		b = append(b, `,"not_ready":`...)
		b = jsonstr.Append(b, strings.ToValidUTF8(e.NotReady, "\uFFFD"))
	}
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendInt(b, e.DurationMS, 10)
	return append(b, "}\n"...)
}

// appendPrompt appends the "prompt" object of an end frame.
func appendPrompt(b []byte, groups []PromptGroup) []byte {
	b = append(b, `,"prompt":{`...)
	seen := make([]string, 0, len(groups))
	for _, g := range groups {
		name := strings.ToValidUTF8(g.Name, "\uFFFD")
		if slices.Contains(seen, name) {
			continue
		}
		if len(seen) > 0 {
			b = append(b, ',')
		}
		seen = append(seen, name)
		b = jsonstr.Append(b, name)
		b = append(b, ':')
		b = jsonstr.Append(b, strings.ToValidUTF8(g.Text, "\uFFFD"))
	}
	return append(b, '}')
}
