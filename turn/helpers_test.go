package turn

import (
	"regexp"
	"testing"
	"time"
)

// clockReplay is a replay driven by hand, with its own clock.
type clockReplay struct {
	*replay
	now time.Time
}

func newClock(tb testing.TB, prompt string, tty bool) *clockReplay {
	tb.Helper()
	r := newReplay(tb, Config{Prompt: regexp.MustCompile(prompt), Terminal: tty})
	return &clockReplay{replay: r, now: r.t0}
}

// after moves the clock on by d, ticking at every deadline on the way.
func (c *clockReplay) after(d time.Duration) *clockReplay {
	c.now = c.now.Add(d)
	c.until(c.now)
	return c
}

func (c *clockReplay) out(s string) *clockReplay {
	c.output([]byte(s), c.now)
	return c
}

func (c *clockReplay) ask(input string, quiet time.Duration) *turnResult {
	c.begin(input, quiet, c.now)
	return c.cur
}

// settle waits out the quiet period.
func (c *clockReplay) settle() *clockReplay { return c.after(time.Second) }
