package child

import (
	"github.com/fifobridge/fifobridge/internal/tty"
	"golang.org/x/sys/unix"
)

// Terminal is the controlling terminal the agent was started on, as its
// stdin. A child started with it gets the terminal's foreground process
// group, and TakeBack gives it back to the agent's group.
type Terminal struct {
	fd   int // the agent's stdin
	pgrp int // the agent's own process group
}

// ControllingTerminal returns the agent's stdin when it is the agent's
// controlling terminal, else nil.
func ControllingTerminal() *Terminal {
	// TIOCGPGRP fails with ENOTTY on anything but the caller's own
	// controlling terminal.
	if _, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err != nil {
		return nil
	}
	return &Terminal{fd: 0, pgrp: unix.Getpgrp()}
}

// foreground reports whether the agent's group has the terminal now: only
// then is it the agent's to hand over. An agent a shell put in the
// background takes nothing from the shell.
func (t *Terminal) foreground() bool {
	pg, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	return err == nil && pg == t.pgrp
}

// TakeBack makes the agent's group the terminal's foreground group again,
// if the group of p, which has ended, still has it. A nil Terminal does
// nothing.
func (t *Terminal) TakeBack(p *Process) error {
	if t == nil {
		return nil
	}
	pg, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	if err != nil || pg != p.Pid {
		return nil
	}
	return t.takeBack()
}

// takeBack makes the agent's group the terminal's foreground group, with
// SIGTTOU blocked (see tty.WithoutTTOU), which a process outside the
// foreground group that sets it gets otherwise.
func (t *Terminal) takeBack() error {
	return tty.WithoutTTOU(func() error {
		return unix.IoctlSetPointerInt(t.fd, unix.TIOCSPGRP, t.pgrp)
	})
}
