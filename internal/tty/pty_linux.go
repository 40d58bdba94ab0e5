package tty

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// A pseudo-terminal is opened here with golang.org/x/sys alone, not with
// github.com/creack/pty: the whole of it is one open and three ioctls, and
// the terminal child's start (Setsid, Setctty, the slave as 0, 1 and 2) is
// child.Reaper.Start's own business, which a library would only wrap.

// OpenPTY opens a new pseudo-terminal pair, both ends with O_CLOEXEC and
// O_NOCTTY. The master is non-blocking, for the runtime poller; the slave
// is for a child (child.Spec.Ctty), to be closed by the caller once it started.
func OpenPTY(size Winsize) (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	s, name, err := openSlave(m)
	if err == nil {
		err = setWinsize(m, size)
	}
	if err != nil {
		unix.Close(m)
		if s >= 0 {
			unix.Close(s)
		}
		return nil, nil, err
	}
	return os.NewFile(uintptr(m), "/dev/ptmx"), os.NewFile(uintptr(s), name), nil
}

// openSlave unlocks the slave of master m and opens it: through the master
// itself (TIOCGPTPEER, Linux 4.13), so the slave is the master's own even
// where /dev/pts is another devpts instance, else by its path.
func openSlave(m int) (fd int, name string, err error) {
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		return -1, "", fmt.Errorf("unlock pseudo-terminal: %w", err)
	}
	n, err := unix.IoctlGetUint32(m, unix.TIOCGPTN)
	if err != nil {
		return -1, "", fmt.Errorf("read pseudo-terminal number: %w", err)
	}
	name = "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	flags := unix.O_RDWR | unix.O_NOCTTY | unix.O_CLOEXEC
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(flags))
	if errno == 0 {
		return int(r), name, nil
	}
	fd, err = unix.Open(name, flags, 0)
	if err != nil {
		return -1, "", fmt.Errorf("open %s: %w", name, err)
	}
	return fd, name, nil
}

// Resize sets the window size of the terminal whose master is master; the
// kernel sends SIGWINCH to the terminal's foreground process group.
func Resize(master *os.File, size Winsize) error {
	rc, err := master.SyscallConn()
	if err != nil {
		return fmt.Errorf("resize terminal: %w", err)
	}
	cerr := rc.Control(func(fd uintptr) { err = setWinsize(int(fd), size) })
	if cerr != nil {
		return fmt.Errorf("resize terminal: %w", cerr)
	}
	return err
}

func setWinsize(fd int, size Winsize) error {
	ws := unix.Winsize{Col: size.Cols, Row: size.Rows}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &ws); err != nil {
		return fmt.Errorf("set window size %s: %w", size, err)
	}
	return nil
}
