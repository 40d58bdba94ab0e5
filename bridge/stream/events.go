//go:build linux

package stream

// This file is what the engine tells its owner without being asked:
// events, each a channel the engine closes, never a state to poll.

// Ready returns a channel that is closed once the engine's child is past
// its start, and stays closed: with a conversation, once a child was
// first ready (showed its prompt); with Config.FirstRun, once the first
// child was seen alive (waiting for its input, running for FirstRun, or
// ended otherwise); else once the first child started. An engine whose
// child never got there (it could not start, its first run failed, a
// stop came first) never closes it: its owner also waits for Run.
func (s *Engine) Ready() <-chan struct{} { return s.ready }

// Pid is the pid of the child started last, 0 before the first: once
// Ready is closed, the child that was ready then or a later one.
func (s *Engine) Pid() int { return int(s.pid.Load()) }

// running records pid, just started, as the child started last, before
// any of its output is read: a conversation that sees it ready at its
// first bytes finds its pid.
func (s *Engine) running(pid int) { s.pid.Store(int64(pid)) }

// markReady closes Ready, once: the conversation tells it at every
// prompt, the first run's judge once.
func (s *Engine) markReady() { s.readyOnce.Do(func() { close(s.ready) }) }
