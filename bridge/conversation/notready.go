//go:build linux

package conversation

import (
	"strings"
	"time"

	"github.com/fifobridge/fifobridge/status"
	"github.com/fifobridge/fifobridge/turn"
)

// This file names a child that does not become ready: an ask past its
// limit whose turn never began, or never could end, is told why, with the
// prompt expression and the child's last line, instead of a bare timeout;
// the status file's turn says the same, for an ask that is interrupted.

// unready is the last moment the child stopped being ready without a turn
// that it would end: its start, or a turn interrupted (past its limit,
// its asker gone, or incomplete). Until the tracker counts a readiness
// more than readies, the child has shown no prompt since. An incomplete
// turn's input is kept as long: a child that keeps it through the
// interrupt (sqlite3) waits for its rest, and the asks past their limit
// meanwhile name it.
type unready struct {
	since      string // status.SinceStart or status.SinceInterrupt
	at         time.Time
	readies    int    // the tracker's Readies then
	incomplete bool   // the turn interrupted was incomplete
	input      string // its input, as quoted (incompleteInput)
}

// markUnready notes that the child, interrupted at now, is not ready
// until it shows its prompt again.
func (r *running) markUnready(now time.Time) {
	if r.tracker != nil {
		r.unready = unready{since: status.SinceInterrupt, at: now, readies: r.tracker.Readies()}
	}
}

// markIncomplete notes that the child, interrupted at now after a turn
// whose input (input) was incomplete, is not ready until it shows its
// prompt again.
func (r *running) markIncomplete(now time.Time, input string) {
	r.markUnready(now)
	r.unready.incomplete, r.unready.input = true, incompleteInput(input)
}

// incompleteInput is what a message quotes of an incomplete turn's
// input: without its last newline, at most its last turn.MaxLastLine
// bytes, as the child's last line is quoted.
func incompleteInput(input string) string {
	return string(turn.Tail([]byte(strings.TrimSuffix(input, "\n"))))
}

// unreadyNow is what the status file says of a child that has not been
// ready since unready's moment, or nil when it has been (or no child
// runs).
func (r *running) unreadyNow() *status.Unready {
	if r.tracker == nil || r.tracker.Readies() != r.unready.readies {
		return nil
	}
	return &status.Unready{Since: r.unready.since, At: r.unready.at,
		Prompt: r.prompt.String(), LastLine: string(r.tracker.LastLine()),
		Incomplete: r.unready.incomplete, Input: r.unready.input}
}

// notReady is the message of an ask past its limit at now when the child
// has not been ready since unready's moment, or "" when it has (the ask
// waited behind other turns, or its own turn ran long) or no child runs.
func (r *running) notReady(now time.Time) string {
	if u := r.unreadyNow(); u != nil {
		return u.Message(now)
	}
	return ""
}
