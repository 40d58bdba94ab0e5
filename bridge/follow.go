//go:build linux

package bridge

import (
	"context"
	"path/filepath"

	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// followFIFOs keeps src and sink on the FIFOs -in and -out name, and
// stream mode's control FIFO on DIR/control, until ctx is done (see
// follow.Ends); FIFOs it makes again get the modes of the first ones and
// are removed at exit. Neither takes a FIFO another end
// serves or served (a.roles), and the status file is rewritten when the
// input FIFO changes.
func (a *agent) followFIFOs(ctx context.Context, src *fifo.Source, sink *fifo.Sink) {
	ends := []follow.End{
		{Dir: a.inDir, Name: filepath.Base(a.cfg.In), Path: a.cfg.In, FIFO: src, Mode: fifo.InputMode(a.cfg.Perm), Input: true, Role: follow.RoleIn},
		{Dir: a.outDir, Name: filepath.Base(a.cfg.Out), Path: a.cfg.Out, FIFO: sink, Mode: fifo.OutputMode(a.cfg.Perm), Role: follow.RoleOut},
	}
	if c := a.controlFIFO(); c != nil {
		ends = append(ends, follow.End{Dir: a.dir, Name: protocol.StreamControl, Path: c.Path(), FIFO: c,
			Mode: fifo.InputMode(a.cfg.Perm), Input: true, Role: follow.RoleControl})
	}
	follow.Ends(ctx, ends, follow.Options{Create: a.cfg.Create, Log: a.cfg.Log, Sink: sink, Created: a.addCreated, Roles: a.roles, Changed: a.statusFile.Poke})
}
