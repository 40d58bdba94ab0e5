//go:build linux

package status

import "os"

// FileMode is the mode of the status file and of DIR/lock for an agent
// whose FIFOs get mode fifoPerm (-perm): the agent reads and writes them,
// and each class of users that -perm lets use the FIFOs at all (read or
// write) may read them. So whoever may send may also check health and see
// whether the agent is alive, and -perm 0600 keeps both private to the
// agent's user. Read access through the directory is still up to the
// directory's own mode.
func FileMode(fifoPerm os.FileMode) os.FileMode {
	m := os.FileMode(0o600)
	if fifoPerm&0o060 != 0 {
		m |= 0o040
	}
	if fifoPerm&0o006 != 0 {
		m |= 0o004
	}
	return m
}
