//go:build linux

package main

import "fmt"

// The whole cycle of one bash session, as a script runs it: each
// contender's p50 and p99 over b.scaleCycles cycles in a round.
const (
	cycP50Metric = "open, first prompt, `echo hi` and its answer, close of a bash session, p50 (ms)"
	cycP99Metric = "open, first prompt, `echo hi` and its answer, close of a bash session, p99 (ms)"
	cycFloor     = "bash on a terminal, driven directly"
	cycBridge    = "fifobridge open, ask -session, close"
	cycTmux      = "tmux new-session, send-keys, wait-for, capture-pane, kill-session"
)

// scaleCycle times b.scaleCycles whole cycles of a bash session through
// each contender, in an order rotated by round: fifobridge's open, ask
// and close on an agent with no other session; tmux's new-session,
// send-keys of the command and a wait-for signal, wait-for,
// capture-pane and kill-session on a server with no other session; and
// the floor, bash started on the harness's own terminal and typed to.
func (b *bench) scaleCycle(round int, r *results) error {
	names := []string{cycFloor, cycBridge}
	if b.tools["tmux"] != "" {
		names = append(names, cycTmux)
	}
	for _, name := range rotate(names, round) {
		c, err := b.newScaleCycler(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		ms, err := runCycles(c, b.scaleCycles)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		r.add(cycP50Metric, name, percentile(ms, 50))
		r.add(cycP99Metric, name, percentile(ms, 99))
	}
	return nil
}

// newScaleCycler readies contender name: its ask is one whole cycle.
func (b *bench) newScaleCycler(name string) (*asker, error) {
	switch name {
	case cycFloor:
		env := []string{"PS1=" + sessPrompt, "TERM=dumb"}
		cycle := func() (string, error) { return ptyCycle(b.scaleBash(), env, scaleCommand, scaleAnswer) }
		return &asker{ask: harnessTimed(cycle), want: scaleAnswer, close: func() error { return nil }}, nil
	case cycTmux:
		s, err := b.startTmux()
		if err != nil {
			return nil, err
		}
		return &asker{ask: harnessTimed(tmuxCycle(s)), want: scaleAnswer, close: stopOnly(s)}, nil
	}
	s, err := b.startSessionsAgent(scaleBridge)
	if err != nil {
		return nil, err
	}
	return &asker{ask: harnessTimed(b.cliCycle(s.dir, scaleCommand)), want: scaleAnswer, close: stopOnly(s)}, nil
}

// tmuxCycle is tmux's whole cycle of session sessName on s.
func tmuxCycle(s *tmuxSide) func() (string, error) {
	return func() (string, error) {
		if err := s.open(sessName); err != nil {
			return "", err
		}
		got, err := s.ask(sessName)
		if cerr := s.close(sessName); err == nil {
			err = cerr
		}
		return got, err
	}
}

// stopOnly is side's stop, untimed.
func stopOnly(side scaleSide) func() error {
	return func() error {
		_, err := side.stop()
		return err
	}
}
