//go:build linux

package conversation

import (
	"log/slog"
	"os"
	"regexp"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/sharedir"
)

// AskName is the control FIFO of a conversation, in DIR.
const AskName = "ask"

// MaxQueued is how many asks may wait for their turn at once; one more is
// refused at once.
const MaxQueued = 1000

// maxHeld bounds the frames of one answer that wait in the agent for their
// asker, in bytes: beyond it the child's output is not read.
const maxHeld = 1 << 20

// Config is what a conversation is told: the part of `fifobridge run`'s
// flags it serves, and the directories the agent opened for it.
type Config struct {
	// Prompt matches the child's prompt (-prompt). Required. Its named
	// groups go into the end frame of a turn that ends at it, and its
	// group "status", when it shows digits, is that frame's status.
	Prompt *regexp.Regexp
	// Continuation, if set, matches the child's continuation prompt
	// (-continuation): shown after the whole input, it ends the turn as
	// incomplete, and the child is interrupted back to its prompt.
	Continuation *regexp.Regexp
	// Settle is how long the child's output must stay quiet after its
	// prompt before it counts as ready (-settle): 0 is turn.DefaultSettle,
	// turn.SettleAtOnce no time at all.
	Settle time.Duration
	// Terminal says the child runs on a terminal (-tty): its answers lose
	// the terminal's echo and escapes, and it is interrupted by ^C typed.
	Terminal bool
	// StopTimeout is -stop-timeout: the patience with an asker that does
	// not read, and the stop's deadline (package bound).
	StopTimeout time.Duration
	// MaxRequest bounds an ask line, in bytes.
	MaxRequest int
	// Create and AskMode say whether and with which mode DIR/ask is made
	// again when it goes missing, as -in is.
	Create  bool
	AskMode os.FileMode

	// Dir is DIR, where DIR/ask is; Replies is DIR/replies. Nil when
	// missing: then nobody can ask.
	Dir, Replies *sharedir.Dir
	// Created is told of every FIFO made again (DIR/ask), to be removed
	// at exit.
	Created func(d *sharedir.Dir, name string)
	// Roles, if set, is what the agent's FIFO ends serve: DIR/ask is
	// recorded there (the status file names it), and no FIFO another end
	// serves or served is served as DIR/ask.
	Roles *follow.Roles

	Log *slog.Logger
	// Poke, if set, is told whenever the status changed.
	Poke func()
	// Activity, if set, is told when an ask is accepted and when a turn
	// ends, for -idle-timeout.
	Activity func()
	// Ready, if set, is told each time the child becomes ready (its
	// prompt taken; turn.Config.Ready): an event, never a poll of
	// Snapshot. It is called under the conversation's lock and must
	// neither wait nor call the conversation.
	Ready func()
}

// Child is the stream engine's side of a conversation: whichever child
// runs now.
type Child interface {
	// WriteTurn writes p whole to the running child's input, between two
	// chunks of the input FIFO's bytes; it waits for a child to take it,
	// and fails once the stream stops. It is called from one goroutine at
	// a time, in order.
	WriteTurn(p []byte) error
	// WriteTurnNow writes p whole to the running child's input and says
	// true when that needs no wait: nothing else is being written there,
	// and there is room for all of p. Otherwise it writes nothing and
	// says false, and WriteTurn is the way. It never waits: it is called
	// under the conversation's lock, when no WriteTurn is under way.
	WriteTurnNow(p []byte) bool
	// Interrupt interrupts a child on pipes (SIGINT to its process group);
	// it must not wait. A terminal's child is interrupted by ^C, typed
	// with WriteTurn instead.
	Interrupt()
}

// Reader tells whether the running child waits for input: whether the
// reader of its input (the terminal's foreground process group, or the
// child's process group on pipes) is blocked reading it, as package
// readwait sees it. The stream engine makes one per child (Reading).
type Reader interface {
	// Blocked reports whether the reader is blocked reading the child's
	// input now, and every byte the child wrote before has been given to
	// Output, so that what the conversation holds is all the child shows.
	// An error wrapping readwait.ErrCannotSee says the answer is unknown.
	// It is called from one goroutine at a time.
	Blocked() (bool, error)
}
