//go:build linux

package conversation

import (
	"errors"
	"strconv"
	"sync"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// askReader is the reader of DIR/ask: it reads ask lines, answers at once
// those it refuses, and hands the others, with their reply FIFO open, to
// the queue (enqueue). With the reader goes DIR/ask's follower (a
// replaced one is served, a missing one made again, as DIR/in is).
// Its fields are set by start, before its goroutines run, and read by stop after; nextID is the
// reader goroutine's alone. It takes no lock of its own: the kept reply
// FIFO and the queue take theirs.
type askReader struct {
	cfg  *Config
	kept *keptReply
	// enqueue takes an accepted ask and its reply FIFO (see
	// askQueue.enqueue); it says whether it kept the FIFO.
	enqueue func(req protocol.ParsedAsk, reply *fifo.Reply) (kept bool, err error)
	wg      *sync.WaitGroup // the conversation's: Wait waits for the reader's goroutines

	src      *fifo.Source     // DIR/ask, or nil
	follower *follow.Follower // DIR/ask's, or nil
	nextID   uint64           // ids given to asks that came without one
}

// start opens DIR/ask and starts its reader and its follower (DIR/ask's
// events, no timer while it is there); stop ends them. The table sweeps
// DIR/replies for every entry. A DIR/ask that cannot be served now (removed
// since the agent made it) is followed all the same, from the start: its
// reader waits for the FIFO the follower finds or makes. Without DIR
// nobody can ask, and that is logged.
func (r *askReader) start() {
	cfg := r.cfg
	if cfg.Dir == nil || cfg.Replies == nil {
		cfg.Log.Warn("no " + AskName + " fifo: the directory is missing; nobody can ask")
		return
	}
	src := r.open()
	r.src = src
	ends := []follow.End{{Dir: cfg.Dir, Name: AskName, Path: cfg.Dir.Join(AskName), FIFO: src, Mode: cfg.AskMode, Input: true, Role: follow.RoleAsk}}
	r.follower = follow.Start(ends, follow.Options{Create: cfg.Create, Log: cfg.Log, Created: cfg.Created, Roles: cfg.Roles, Changed: cfg.Poke})
	r.wg.Add(1)
	go func() { defer r.wg.Done(); r.read(src) }()
}

// stop stops the follower and closes DIR/ask, which ends
// the reader.
func (r *askReader) stop() {
	if r.follower != nil {
		r.follower.Stop()
	}
	if r.src != nil {
		r.src.Close()
	}
}

// open opens DIR/ask as the agent's Source and claims it; where that
// fails (DIR/ask is missing, not a FIFO, or one another end serves), it
// returns a pending Source, which serves the first FIFO its follower
// accepts there: asks are served once DIR/ask names one again
// (follow.OpenSource). The status file is told of what it serves.
func (r *askReader) open() *fifo.Source {
	cfg := r.cfg
	src, err := follow.OpenSource(cfg.Dir, AskName, follow.RoleAsk, cfg.Roles)
	if err != nil {
		cfg.Log.Warn("cannot serve the ask fifo yet; it is followed, and asks are served once it names a fifo again "+
			"(one missing for a second is made again, with -create)", "path", cfg.Dir.Join(AskName), "err", err)
	} else if cfg.Roles != nil && cfg.Poke != nil {
		cfg.Poke()
	}
	return src
}

// read reads ask lines from src until it is closed, and queues each
// ask or answers it with one error frame.
func (r *askReader) read(src *fifo.Source) {
	lines := protocol.NewLineReader(src, r.cfg.MaxRequest)
	lines.Each(func(line []byte, err error) { // until src is closed: stopping
		if err == nil && protocol.IsBlank(line) {
			return
		}
		r.accept(line, err)
	})
}

// accept handles one ask line, or the *protocol.TooLongError that stands
// for one. An ask is answered on its own reply FIFO only: one that names
// no usable reply FIFO, or one that cannot be opened, is answered in the
// log alone (the output FIFO is the child's transcript, and a reply's
// name and id are its sender's secrets). A damaged line (one that may
// hold bytes of two writers, protocol.ErrDamaged) is answered nowhere.
// The reply FIFO is opened here (or the one kept from the asker's turn
// before is taken, kept.go) to check it and to refuse at once, and closed
// again unless the ask's turn begins at once (enqueue): a waiting ask
// holds no descriptor.
func (r *askReader) accept(line []byte, err error) {
	var req protocol.ParsedAsk
	var tooLong *protocol.TooLongError
	if errors.As(err, &tooLong) {
		req.ID, req.Reply = protocol.SalvageHead(tooLong.Head)
	} else {
		req, err = protocol.ParseAsk(line)
	}
	if errors.Is(err, protocol.ErrDamaged) {
		// Its reply may be that of the writer who damaged it: nothing
		// is written there; the reply its first, atomic piece names is
		// removed, so that an ask that wrote it ends at once.
		answer.RefuseDamaged(r.cfg.Log, r.cfg.Replies, "ask line", req.Reply, err)
		return
	}
	if req.ID == "" {
		req.ID = r.newID() // as exec mode does: every frame names its ask
	}
	if req.Reply == "" {
		r.cfg.Log.Warn("ask not answered: it names no reply fifo", "id", req.ID, "err", err)
		return
	}
	reply, rerr := r.kept.open(req.Reply)
	if rerr != nil {
		r.cfg.Log.Warn("ask not answered: its reply fifo cannot be opened", "id", req.ID, "err", rerr)
		if !answer.NotAReply(rerr) {
			answer.DropUnanswerable(r.cfg.Log, r.cfg.Replies, req.Reply, rerr)
		}
		return
	}
	if err == nil {
		var kept bool
		if kept, err = r.enqueue(req, reply); kept {
			return
		}
	}
	defer reply.Close()
	if err != nil {
		r.cfg.Log.Warn("ask refused", "id", req.ID, "err", err)
		if werr := answer.WriteNow(reply, answer.ErrorFrame(req.ID, err)); werr != nil {
			r.cfg.Log.Warn("error frame dropped: its reply fifo takes nothing", "id", req.ID, "err", werr)
		}
	}
}

// newID names an ask that came without an id.
func (r *askReader) newID() string {
	r.nextID++
	return "a" + strconv.FormatUint(r.nextID, 10)
}
