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
	return newClockConfig(tb, Config{Prompt: regexp.MustCompile(prompt), Terminal: tty})
}

func newClockConfig(tb testing.TB, cfg Config) *clockReplay {
	tb.Helper()
	r := newReplay(tb, cfg)
	return &clockReplay{replay: r, now: r.t0}
}

// python is a clock for python3 on pipes with the README's recipe:
// -prompt '^>>> $' -continuation '^\.\.\. $', at its first prompt.
func python(tb testing.TB) *clockReplay {
	tb.Helper()
	c := newClockConfig(tb, Config{Prompt: regexp.MustCompile(`^>>> $`), Continuation: regexp.MustCompile(`^\.\.\. $`)})
	c.out(">>> ").settle()
	return c
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
