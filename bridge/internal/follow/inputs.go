//go:build linux

package follow

import "github.com/fifobridge/fifobridge/status"

// Inputs identifies the input FIFOs served now, by role (RoleIn,
// RoleAsk, RoleControl), as the status file names them (status.Status.Inputs); nil
// when none is.
func (r *Roles) Inputs() map[string]status.FIFO {
	var m map[string]status.FIFO
	for _, role := range []string{RoleIn, RoleAsk, RoleControl} {
		if id, ok := r.Current(role); ok {
			if m == nil {
				m = map[string]status.FIFO{}
			}
			m[role] = status.FIFO{Dev: id.Dev, Ino: id.Ino, Btime: id.Btime}
		}
	}
	return m
}
