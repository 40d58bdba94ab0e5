//go:build linux

package follow

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/fifobridge/fifobridge/fifo"
)

// The roles of the agent's FIFO ends: what an End serves.
const (
	RoleIn  = "in"  // the input FIFO (-in)
	RoleOut = "out" // the output FIFO (-out)
	RoleAsk = "ask" // a conversation's DIR/ask
	// RoleControl is stream mode's control FIFO, DIR/control
	// (protocol.StreamControl).
	RoleControl = "control"
)

// ErrOtherRole is returned by Roles.Claim for a FIFO that another of the
// agent's ends serves, or served.
var ErrOtherRole = errors.New("the agent serves it as another fifo")

// maxRemembered bounds how many FIFOs of the agent's own user Roles keeps
// apart. Each is one that one of the agent's ends served and that still
// has a name: the ones made at start, and one more each time a FIFO was
// replaced while the old one was kept under another name, which the
// follower sees at most once a second per end. Past the bound, no new
// one is served (fail closed): the agent keeps the FIFOs it has.
const maxRemembered = 4096

// Roles is what each of the agent's FIFO ends serves now, and the end
// every FIFO of the agent's own user it ever served belongs to: such a
// FIFO serves that one end for as long as it lives (fifo.ID tells it from
// a later FIFO given its inode number; one let go of with no name left is
// forgotten, see Release). A writer of DIR who renames the agent's FIFOs
// (swaps DIR/in and DIR/ask) therefore never makes the agent read one as
// another: the agent keeps serving each as what it was, and what its
// status file ever said of a FIFO (see status.Status.Inputs) stays true
// of it, even read back from an old copy of the file someone kept.
// FIFOs of other users are not remembered, so that they cannot fill the
// record: where others may write DIR, a client writes no request into
// one (its owner could read it), and where they may not, only the
// agent's user and root rename anything there. Roles is safe for
// concurrent use.
type Roles struct {
	uid     uint32
	mu      sync.Mutex
	current map[string]fifo.ID
	owner   map[fifo.ID]string
}

// NewRoles returns an empty record for an agent of this process's user.
func NewRoles() *Roles {
	return &Roles{uid: uint32(os.Geteuid()), current: map[string]fifo.ID{}, owner: map[fifo.ID]string{}}
}

// Served is what Serve needs of a FIFO end: fifo.Source and fifo.Sink.
type Served interface {
	Describe() (fifo.Info, error)
	SetRelease(fn func(fifo.Info))
}

// Serve claims the FIFO e serves now for the end role (Claim), and has
// every FIFO e lets go of released (Release). Call it once per end,
// before the end is followed. A pending end (fifo.ErrPending) claims
// nothing now: its follower claims the first FIFO it serves.
func (r *Roles) Serve(role string, e Served) error {
	i, err := e.Describe()
	switch {
	case errors.Is(err, fifo.ErrPending):
	case err != nil:
		return err
	default:
		if err := r.Claim(role, i); err != nil {
			return err
		}
	}
	e.SetRelease(func(i fifo.Info) { r.Release(role, i) })
	return nil
}

// Claim records that the end role serves the FIFO i describes from now
// on. It fails, and records nothing, when that FIFO belongs to the
// agent's user and another end served it, or when maxRemembered such
// FIFOs were served already.
func (r *Roles) Claim(role string, i fifo.Info) error {
	id := i.ID
	r.mu.Lock()
	defer r.mu.Unlock()
	if i.Uid == r.uid {
		had, ok := r.owner[id]
		switch {
		case ok && had != role:
			return fmt.Errorf("%w: %s", ErrOtherRole, had)
		case !ok && len(r.owner) >= maxRemembered:
			return fmt.Errorf("the agent's fifos were made again or replaced %d times; it serves no new one", maxRemembered)
		case !ok:
			r.owner[id] = role
		}
	}
	r.current[role] = id
	return nil
}

// Release is told that the end role closed for good the FIFO i
// describes (fifo's SetRelease). One that has no name left is gone once
// closed: it is forgotten (where the file system keeps no birth time, a
// new FIFO may then get its very ID). One that still has a name (someone
// moved it elsewhere) stays the end's.
func (r *Roles) Release(role string, i fifo.Info) {
	if i.Nlink != 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owner[i.ID] == role {
		delete(r.owner, i.ID)
	}
}

// Current returns the FIFO the end role serves now, if it claimed one.
func (r *Roles) Current(role string) (fifo.ID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.current[role]
	return id, ok
}
