package tty

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Foreground returns the foreground process group of the terminal whose
// master is master: the group that reads what is typed. It is 0 when the
// terminal has none (its session leader has exited). On Linux TIOCGPGRP
// on a master answers for its slave, whoever the caller is; on a slave it
// answers only to a process of the terminal's session.
func Foreground(master *os.File) (int, error) {
	rc, err := master.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("read the foreground group of %s: %w", master.Name(), err)
	}
	var pg int
	cerr := rc.Control(func(fd uintptr) { pg, err = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) })
	if err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("read the foreground group of %s: %w", master.Name(), err)
	}
	return pg, nil
}
