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
	// Prompt matches the child's prompt (-prompt). Required.
	Prompt *regexp.Regexp
	// Terminal says the child runs on a terminal (-tty): its answers lose
	// the terminal's echo and escapes, and it is interrupted by ^C typed.
	Terminal bool
	// StopTimeout is -stop-timeout: the patience with an asker that does
	// not read, and the stop's deadline (package bound).
	StopTimeout time.Duration
	// MaxRequest bounds an ask line, in bytes.
	MaxRequest int
	// ReplySweep, if set, replaces the reply sweep's period and age (see
	// answer.Sweep); tests only.
	ReplySweep time.Duration
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
}

// Child is the stream engine's side of a conversation: whichever child
// runs now.
type Child interface {
	// WriteTurn writes p whole to the running child's input, between two
	// chunks of the input FIFO's bytes; it waits for a child to take it,
	// and fails once the stream stops. It is called from one goroutine at
	// a time, in order.
	WriteTurn(p []byte) error
	// Interrupt interrupts a child on pipes (SIGINT to its process group);
	// it must not wait. A terminal's child is interrupted by ^C, typed
	// with WriteTurn instead.
	Interrupt()
}
