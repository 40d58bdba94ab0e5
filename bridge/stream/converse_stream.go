package stream

import (
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
)

// This file wires a conversation (-prompt) into stream mode: the child's
// output goes to the turn tracker and to the transcript instead of
// straight to the output FIFO, a turn's input goes through the feeder's
// (or the terminal's) writer, and DIR/ask is served.

// converse sets the stream up for -prompt.
func (s *Engine) converse() {
	s.script = newTranscript(s.sink)
	interrupt := func() { s.sup.Signal(syscall.SIGINT) } // the child's process group
	write := s.feed.writeTurn
	if s.tty != nil {
		write = s.tty.writeTurn
	}
	s.conv = newConversation(s.cfg, write, nil, s.poke)
	if s.tty != nil {
		// Typed, as a person would: the line discipline interrupts the
		// terminal's foreground process group.
		interrupt = func() { s.conv.send([]byte{0x03}) }
		s.tty.conv, s.tty.script = s.conv, s.script
	} else {
		s.feed.typed = s.conv.typed
	}
	s.conv.interrupt = interrupt
}

// serveConversation starts the turn loop, the transcript's writer and the
// reader of DIR/ask, which wg waits for; the loop ends once done is
// closed. The function returned refuses the asks still queued and stops
// reading DIR/ask: call it when the child ended for good.
func (s *Engine) serveConversation(wg *sync.WaitGroup, done <-chan struct{}) (stop func()) {
	if s.conv == nil {
		return func() {}
	}
	wg.Add(2)
	go func() { defer wg.Done(); s.conv.loop(done) }()
	go func() { defer wg.Done(); s.script.run() }()
	var asks *fifo.Source
	if s.cfg.Dir == nil || s.cfg.Replies == nil {
		s.cfg.Log.Warn("no " + AskName + " fifo: the directory is missing; nobody can ask")
	} else if src, err := fifo.OpenSourceAt(s.cfg.Dir, AskName); err != nil {
		s.cfg.Log.Warn("cannot serve the ask fifo; nobody can ask", "err", err)
	} else {
		asks = src
		wg.Add(1)
		go func() { defer wg.Done(); s.conv.serveAsks(asks, s.cfg.Replies) }()
	}
	// DIR/ask is followed as DIR/in and DIR/out are: a replaced one is
	// served, a missing one made again.
	followCtx, stopFollow := context.WithCancel(context.Background())
	if asks != nil {
		ends := []follow.End{{Dir: s.cfg.Dir, Name: AskName, Path: s.cfg.Dir.Join(AskName), FIFO: asks, Mode: s.cfg.AskMode, Input: true}}
		o := follow.Options{Create: s.cfg.Create, Log: s.cfg.Log, Created: s.cfg.Created}
		wg.Add(2)
		go func() { defer wg.Done(); follow.Ends(followCtx, ends, o) }()
		// A killed ask's reply FIFO is swept as a killed send's is.
		go func() {
			defer wg.Done()
			answer.Sweep(followCtx, s.cfg.Log, s.cfg.Replies, s.cfg.ReplySweep, func(string) bool { return false })
		}()
	}
	return func() {
		s.conv.stop()
		stopFollow()
		if asks != nil {
			asks.Close() // ends serveAsks
		}
	}
}

// closeConversation waits for the turns' input writes and for the asks'
// reply writers, giving up on readers that do not read after flushGrace.
func (s *Engine) closeConversation() {
	if s.conv == nil {
		return
	}
	s.conv.inputs.Wait()
	written := make(chan struct{})
	go func() { s.conv.replies.Wait(); close(written) }()
	select {
	case <-written:
		return
	case <-time.After(flushGrace):
	}
	s.conv.giveUpReplies()
	<-written
}

// copyConverse is copyOut for -prompt: the child's stdout is read into the
// agent, offered to the transcript, which never waits, and given to the
// conversation. Until EOF, or until unwire asks it to finish; then it
// takes what is still in the pipe.
func (s *Engine) copyConverse(w *wiring) {
	s.readOut(w, func(p []byte) bool { s.offer(p); return true })
}

// offer gives p, the child's output, to the transcript, the -tee copy
// and the conversation; none of them waits.
func (s *Engine) offer(p []byte) {
	s.script.offer(p)
	if s.tee != nil {
		s.tee.offer(p)
	}
	s.conv.output(p)
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
