//go:build linux

package stream

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/internal/readwait"
	"github.com/fifobridge/fifobridge/internal/tty"
	"golang.org/x/sys/unix"
)

// This file is how a conversation sees its child wait for input: a probe
// of package readwait, made at each start from the child's input (the
// agent's end of its stdin pipe, or the terminal's slave before the agent
// closes it), asked about the child's process group on pipes and about
// the terminal's foreground group with -tty, and the copy of the child's
// output, which takes a lock from each read until the conversation has
// what it read.

// childReader is a conversation.Reader for one child.
type childReader struct {
	probe  *readwait.Probe
	pgid   int         // on pipes: the child's group, which it leads
	master *os.File    // with -tty: the terminal, whose foreground group reads it
	out    *os.File    // what the agent reads the child's output from
	taking *sync.Mutex // held by the copy from a read of out until the conversation took the bytes
}

// Blocked reports whether the reader of the child's input is blocked
// reading it and the agent has taken all the child's output: with the
// copy's lock held, out has nothing to read, so every byte written before
// the reader blocked has reached the conversation.
func (r *childReader) Blocked() (bool, error) {
	pg := r.pgid
	if r.master != nil {
		var err error
		if pg, err = tty.Foreground(r.master); err != nil {
			return false, err
		}
	}
	blocked, err := r.probe.Blocked(pg)
	if !blocked || err != nil {
		return false, err
	}
	if !r.taking.TryLock() {
		return false, nil // the copy has bytes the conversation has not taken yet
	}
	defer r.taking.Unlock()
	more, err := readable(r.out)
	return !more && err == nil, err
}

// readable reports whether f has bytes to read now, by poll(2): on a
// terminal's master, unlike FIONREAD, that first waits for the kernel to
// move what the slave's side was given to the master's (n_tty_poll
// flushes the terminal's buffer work), so that bytes the child wrote just
// before it blocked are not missed while the kernel still moves them.
func readable(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	fds := []unix.PollFd{{Events: unix.POLLIN}}
	cerr := rc.Control(func(fd uintptr) {
		fds[0].Fd = int32(fd)
		for {
			if _, err = unix.Poll(fds, 0); err != unix.EINTR {
				return
			}
		}
	})
	if err == nil {
		err = cerr
	}
	if err == nil && fds[0].Revents&(unix.POLLERR|unix.POLLNVAL) != 0 {
		err = fmt.Errorf("poll: revents %#x", fds[0].Revents)
	}
	if err != nil {
		return false, fmt.Errorf("look for bytes unread in %s: %w", f.Name(), err)
	}
	return fds[0].Revents&(unix.POLLIN|unix.POLLPRI) != 0, nil
}

// newProbe makes the probe of a child's input, or nil when there is none:
// off (readwait.OffEnv), or this agent cannot see, which it logs. With a
// conversation (turns), its turns then end after -settle at every
// prompt; a session's first run without one is then known to have
// started only once its FirstRun has passed (firstrun.go), which is
// logged at debug level only, as every open would say it again.
func newProbe(input *os.File, log *slog.Logger, turns bool) *readwait.Probe {
	p, err := readwait.NewProbe(input)
	switch {
	case err == nil:
		return p
	case !turns:
		log.Debug("the first child counts as started only when its grace period is over: no read probe", "err", err)
	case errors.Is(err, readwait.ErrOff):
		log.Debug("turns end after -settle: the read probe is off")
	default:
		log.Info("turns end after -settle: the agent cannot see whether the child waits for input", "err", err)
	}
	return nil
}

// reading tells the conversation how to see the child started last wait
// for input: nil, without a probe.
func reading(talk talk, r *childReader) {
	if r.probe == nil {
		talk.Reading(nil)
		return
	}
	talk.Reading(r)
}

// readTaking reads at most size bytes of f once it has bytes (waiting
// through spin, f's spinner, with no buffer held), and gives them to
// take, with taking held from the read until take returns (see
// childReader). take must not keep its slice: the buffer goes back to its
// pool (chunks.go). It reports take's answer, and the read's error.
func readTaking(f *os.File, spin *pipeio.ReadSpinner, taking *sync.Mutex, size int, take func([]byte) bool) (bool, error) {
	spin.WaitReadable() // its error, if any, is f.Read's too
	taking.Lock()
	defer taking.Unlock()
	buf := takeChunk(size)
	defer giveChunk(buf)
	n, err := f.Read(*buf)
	if n > 0 && !take((*buf)[:n]) {
		return false, err
	}
	return true, err
}

var _ conversation.Reader = (*childReader)(nil)
