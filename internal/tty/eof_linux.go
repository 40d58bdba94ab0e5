package tty

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNoEOFChar is returned by EOFChar for a terminal whose EOF character
// is turned off (stty eof undef).
var ErrNoEOFChar = errors.New("the terminal has no EOF character (stty eof undef)")

// EOFChar returns the terminal's EOF character (VEOF, ^D unless a
// program changed it), read from its master: typed at the start of a
// line in canonical mode, it makes the reader's read return 0, end of
// file. The master shares its slave's settings.
func EOFChar(master *os.File) (byte, error) {
	rc, err := master.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("read the terminal settings of %s: %w", master.Name(), err)
	}
	var t *unix.Termios
	cerr := rc.Control(func(fd uintptr) { t, err = unix.IoctlGetTermios(int(fd), unix.TCGETS) })
	if err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("read the terminal settings of %s: %w", master.Name(), err)
	}
	c := t.Cc[unix.VEOF]
	if c == 0 { // _POSIX_VDISABLE
		return 0, ErrNoEOFChar
	}
	return c, nil
}
