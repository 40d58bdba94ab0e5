package readwait

import (
	"runtime"
	"testing"
	"time"
)

// The cost of one probe, and how soon after its prompt a REPL is seen
// blocked (the figures are in the package comment).

func benchBlocked(b *testing.B, pid int, p *Probe, want bool) {
	b.ReportAllocs()
	for b.Loop() {
		got, err := p.Blocked(pid)
		if err != nil || got != want {
			b.Fatalf("Blocked: %v, %v; want %v", got, err, want)
		}
	}
}

// BenchmarkBlocked: python3 blocked reading its pipe: a read on the
// leader's main thread, the answer after its syscall file and one link.
func BenchmarkBlocked(b *testing.B) {
	c, p := pythonPipes(b)
	waitBlocked(b, p, c.pid(), true)
	benchBlocked(b, c.pid(), p, true)
}

// BenchmarkBlockedTerminal: python3 in select on its terminal: the read
// set is read from its memory as well.
func BenchmarkBlockedTerminal(b *testing.B) {
	c := startTTY(b, []string{"TERM=dumb"}, python...)
	p := c.probe()
	c.expect(">>> ")
	waitBlocked(b, p, c.pid(), true)
	benchBlocked(b, c.pid(), p, true)
}

// BenchmarkNotBlocked: python3 asleep in time.sleep: every thread and
// the children are looked at before the answer is no.
func BenchmarkNotBlocked(b *testing.B) {
	c, p := pythonPipes(b)
	c.write("import time; print('sleep'); time.sleep(600)\n")
	c.expect("sleep\n")
	waitAsleep(b, c.pid(), callOther)
	benchBlocked(b, c.pid(), p, false)
}

// BenchmarkTurn: one turn of python3 on pipes (1+1), ended as the
// conversation would end it: from the moment its prompt is read, probe
// at once and then on NextProbe's schedule until it is seen blocked. It
// reports the probes a turn took and the time from the prompt to the
// answer yes.
func BenchmarkTurn(b *testing.B) {
	c, p := pythonPipes(b)
	waitBlocked(b, p, c.pid(), true)
	var probes int
	var wait time.Duration
	for b.Loop() {
		c.write("1+1\n")
		c.expect("2\n>>> ")
		seen := time.Now()
		for {
			probes++
			blocked, err := p.Blocked(c.pid())
			if err != nil {
				b.Fatal(err)
			}
			if blocked {
				break
			}
			if d := NextProbe(time.Since(seen)); d > 0 {
				time.Sleep(d)
			} else {
				runtime.Gosched()
			}
		}
		wait += time.Since(seen)
	}
	b.ReportMetric(float64(probes)/float64(b.N), "probes/turn")
	b.ReportMetric(float64(wait.Nanoseconds())/float64(b.N)/1e3, "µs-prompt-to-blocked")
}
