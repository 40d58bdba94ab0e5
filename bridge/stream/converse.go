//go:build linux

package stream

import (
	"context"
	"syscall"

	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/status"
)

// This file wires a conversation (-prompt, package conversation) into
// stream mode: the child's output goes to the conversation, which follows
// the turns and keeps the output FIFO as a transcript, instead of straight
// to the output FIFO; a turn's input goes through the feeder's (or the
// terminal's) writer.

// talk is what stream mode tells the conversation of its child: a
// *conversation.Conversation with -prompt, or quiet without.
type talk interface {
	Start(ctx context.Context)
	Started()
	Reading(r conversation.Reader)
	Typed()
	Output(p []byte)
	OutputEnded()
	Exited(st child.ExitStatus, last bool)
	Stop()
	Wait()
	Busy() bool
	Readied() bool
	Snapshot() (*status.Turn, *status.Transcript)
}

// quiet is the talk of a stream without a conversation: nobody listens.
type quiet struct{}

func (quiet) Start(context.Context)                        {}
func (quiet) Started()                                     {}
func (quiet) Reading(conversation.Reader)                  {}
func (quiet) Typed()                                       {}
func (quiet) Output([]byte)                                {}
func (quiet) OutputEnded()                                 {}
func (quiet) Exited(child.ExitStatus, bool)                {}
func (quiet) Stop()                                        {}
func (quiet) Wait()                                        {}
func (quiet) Busy() bool                                   { return false }
func (quiet) Readied() bool                                { return false }
func (quiet) Snapshot() (*status.Turn, *status.Transcript) { return nil, nil }

// converse makes the conversation of -prompt, with the stream's own
// settings, its child and its output FIFO as the transcript.
func (s *Engine) converse() talk {
	cc := *s.cfg.Conversation
	cc.Terminal, cc.StopTimeout, cc.Log = s.cfg.Tty, s.cfg.StopTimeout, s.cfg.Log
	cc.Poke, cc.Activity, cc.Ready = s.poke, s.idle.Touch, s.markReady
	return conversation.New(&cc, conversing{s}, s.sink)
}

// conversing is the stream's child as its conversation drives it.
type conversing struct{ s *Engine }

// WriteTurn writes a turn's input, or ^C on a terminal, whole, between
// two chunks of the input FIFO's bytes.
func (c conversing) WriteTurn(p []byte) error {
	if c.s.tty != nil {
		return c.s.tty.writeTurn(p)
	}
	return c.s.feed.writeTurn(p)
}

// Interrupt sends SIGINT to the child's process group (pipes only).
func (c conversing) Interrupt() { c.s.sup.Signal(syscall.SIGINT) }

// copyConverse is copyOut for -prompt: the child's stdout is read into the
// agent, offered to the -tee copy and the watchers, which never wait, and
// given to the conversation, which waits while the asker of the turn in
// progress has no room (the child waits then too). Until EOF, or until
// unwire asks it to finish; then it takes what is still in the pipe.
func (s *Engine) copyConverse(w *wiring) {
	s.readOut(w, pipeio.PipeSize/4, func(p []byte) bool {
		if s.tee != nil {
			s.tee.offer(p)
		}
		s.watch.offer(p)
		s.first.output(p)
		s.talk.Output(p)
		return true
	})
}

// interruptible is st for a conversation's child on pipes: SIGINT is not
// ignored, whatever the agent inherited (an agent started with & from a
// script ignores it), so that an interrupted turn can interrupt it. The
// runtime never leaves SIGINT blocked, so the mask needs no change.
func interruptible(st *child.SignalState) *child.SignalState {
	if st == nil {
		return nil
	}
	t := *st
	t.Ignored = nil
	for _, sig := range st.Ignored {
		if sig != syscall.SIGINT {
			t.Ignored = append(t.Ignored, sig)
		}
	}
	return &t
}
