//go:build linux

package client

import (
	"errors"
	"fmt"
	"os"

	"github.com/fifobridge/fifobridge/sharedir"
)

// Names of the agent's files in DIR that Send and Ask use.
const (
	inName     = "in"          // exec mode's input FIFO
	askName    = "ask"         // a conversation's control FIFO
	statusName = "status.json" // the agent's status file
)

// enterDir enters DIR once, with an O_PATH descriptor (sharedir.Enter: no
// symbolic link followed where others could have made it, no permission
// to list it needed). Send and Ask reach everything in DIR through it: the
// input FIFO, replies/, the status file and the lock, so that DIR is
// resolved once, however long the request waits. A missing DIR is
// notThere, which each front door names (ErrNoAgent, ErrNoConversation),
// with hint, if any, after the path.
func enterDir(dir string, notThere error, hint string) (*sharedir.Dir, error) {
	d, err := sharedir.Enter(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist%s", notThere, dir, hint)
	}
	return d, err
}
