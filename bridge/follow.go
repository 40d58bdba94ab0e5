//go:build linux

package bridge

import (
	"context"
	"path/filepath"

	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/fifo"
)

// followFIFOs keeps src and sink on the FIFOs -in and -out name until ctx
// is done (see follow.Ends); FIFOs it makes again get the modes of the
// first ones and are removed at exit. Neither takes a FIFO another end
// serves or served (a.roles), and the status file is rewritten when the
// input FIFO changes.
func (a *agent) followFIFOs(ctx context.Context, src *fifo.Source, sink *fifo.Sink) {
	follow.Ends(ctx, []follow.End{
		{Dir: a.inDir, Name: filepath.Base(a.cfg.In), Path: a.cfg.In, FIFO: src, Mode: fifo.InputMode(a.cfg.Perm), Input: true, Role: follow.RoleIn},
		{Dir: a.outDir, Name: filepath.Base(a.cfg.Out), Path: a.cfg.Out, FIFO: sink, Mode: fifo.OutputMode(a.cfg.Perm), Role: follow.RoleOut},
	}, follow.Options{Create: a.cfg.Create, Log: a.cfg.Log, Sink: sink, Created: a.addCreated, Roles: a.roles, Changed: a.statusFile.Poke})
}
