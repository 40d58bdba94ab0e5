//go:build linux && (386 || arm)

package child

import "golang.org/x/sys/unix"

// The system calls with 32-bit ids: the plain ones take 16-bit ids here.
const (
	sysSetgroups = unix.SYS_SETGROUPS32
	sysSetresgid = unix.SYS_SETRESGID32
	sysSetresuid = unix.SYS_SETRESUID32
)
