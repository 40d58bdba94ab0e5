//go:build linux

package follow

import (
	"fmt"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// OpenSource opens the input FIFO name of d as a Source that serves role,
// claimed in roles when set (Roles.Serve). Where that fails (the entry is
// missing, is not a FIFO, or is one that another end serves or served),
// it returns a pending Source instead (fifo.PendingSourceAt), which
// serves the first FIFO that a follower of the entry accepts there, and
// the error that kept it pending, for the log: the caller follows the
// entry either way. d must stay open as long as the Source is.
func OpenSource(d *sharedir.Dir, name, role string, roles *Roles) (*fifo.Source, error) {
	src, err := fifo.OpenSourceAt(d, name)
	if err == nil && roles != nil {
		if err = roles.Serve(role, src); err != nil {
			src.Close()
			err = fmt.Errorf("serve fifo %s: %w", d.Join(name), err)
		}
	}
	if err == nil {
		return src, nil
	}
	src = fifo.PendingSourceAt(d, name)
	if roles != nil {
		roles.Serve(role, src) // a pending Source claims nothing: it cannot fail
	}
	return src, err
}
