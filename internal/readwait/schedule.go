//go:build linux

package readwait

import "time"

// When to probe, once the child's output ends in a line that looks like
// its prompt: at once (the child is nearly always seen blocked then), and
// while it is not, back to back for SpinFor, then on timers from
// FirstWait, doubling, until -settle has passed and the quiet period
// decides. Timers are not finer than that: on Linux a Go timer of 50 µs
// fires after about 1.07 ms while the runtime's poller waits (its
// epoll_pwait takes milliseconds), so steps below a millisecond are a
// spin, and only the first 100 µs are worth one.
//
// Measured on Linux 6.18, 2 cores, python3 -i on pipes, 5,000 turns of
// 1+1: idle, 99.7 % were seen blocked at the first probe and the rest
// within 55 µs; with both cores busy, 98 % at the first probe and the
// rest after 3 ms (median) to 13 ms: the child waits for a core.
const (
	SpinFor   = 100 * time.Microsecond
	FirstWait = time.Millisecond
)

// NextProbe is how long to wait before the next probe, since being the
// time since the prompt-looking output arrived, every probe so far having
// said no: 0 (yield the processor, runtime.Gosched, and probe again)
// until SpinFor, then as long again as since has been, at least
// FirstWait. A caller stops once since reaches -settle.
func NextProbe(since time.Duration) time.Duration {
	if since < SpinFor {
		return 0
	}
	return max(since, FirstWait)
}
