//go:build linux

package bridge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// warnInputReaders logs one warning that names every input FIFO (the
// input FIFO, DIR/ask with -prompt, and stream mode's DIR/control) that users other than the
// agent's may read (fifo.OthersMayRead): one the agent found rather than
// made, with -create=false or left there before it started. Whoever may
// read an input FIFO may read the requests sent and the names of their
// reply FIFOs, which are the only key to them where the agent is another
// non-root user. A FIFO the agent made never gets that mode
// (fifo.InputMode).
func (a *agent) warnInputReaders() {
	var found []string
	look := func(d *sharedir.Dir, name string) {
		if d == nil {
			return
		}
		if st, err := d.Stat(name); err == nil && fifo.OthersMayRead(&st, os.Geteuid()) {
			found = append(found, fmt.Sprintf("%s (mode %04o, uid %d)", d.Join(name), st.Mode&0o7777, st.Uid))
		}
	}
	look(a.inDir, filepath.Base(a.cfg.In))
	if a.converses() {
		look(a.dir, conversation.AskName)
	}
	if a.servesControl() {
		look(a.dir, protocol.StreamControl)
	}
	if len(found) > 0 {
		a.cfg.Log.Warn("input fifos readable by other users: they can read the requests and the names of their reply fifos;"+
			" give the agent's user alone read access (mode 0620 for -perm 0660)", "fifos", strings.Join(found, ", "))
	}
}
