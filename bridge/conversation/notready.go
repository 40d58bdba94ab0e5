package conversation

import (
	"fmt"
	"strconv"
	"time"
)

// This file names a child that does not become ready: an ask past its
// limit whose turn never began, or never could end, is told why, with the
// prompt expression and the child's last line, instead of a bare timeout.

// unready is the last moment the child stopped being ready without a turn
// that it would end: its start, or a turn interrupted (past its limit,
// its asker gone, or incomplete). Until the tracker counts a readiness
// more than readies, the child has shown no prompt since.
type unready struct {
	since   string // what happened then, as notReady says it
	at      time.Time
	readies int // the tracker's Readies then
}

// What unready.since says.
const (
	sinceStart     = "it started"
	sinceInterrupt = "the turn before was interrupted"
)

// markUnready notes that the child, interrupted at now, is not ready
// until it shows its prompt again. Under c.mu.
func (c *Conversation) markUnready(now time.Time) {
	if c.tracker != nil {
		c.unready = unready{since: sinceInterrupt, at: now, readies: c.tracker.Readies()}
	}
}

// notReady is the message of an ask past its limit at now when the child
// has not been ready since unready's moment, or "" when it has (the ask
// waited behind other turns, or its own turn ran long) or no child runs.
// Under c.mu.
func (c *Conversation) notReady(now time.Time) string {
	if c.tracker == nil || c.tracker.Readies() != c.unready.readies {
		return ""
	}
	msg := fmt.Sprintf("the child has shown no prompt matching %s since %s %s ago; ",
		quoteRegexp(c.cfg.Prompt.String()), c.unready.since, ago(now.Sub(c.unready.at)))
	if last := c.tracker.LastLine(); len(last) > 0 {
		return msg + "its last line is " + strconv.Quote(string(last))
	}
	return msg + "it has shown no line"
}

// quoteRegexp quotes a prompt expression as a shell user would write it,
// in single quotes, unless it holds one.
func quoteRegexp(re string) string {
	for _, r := range re {
		if r == '\'' || r < ' ' || r == 0x7f {
			return strconv.Quote(re)
		}
	}
	return "'" + re + "'"
}

// ago rounds d for a person: to a tenth of a second, to a second from a
// minute on.
func ago(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
