//go:build linux && (386 || arm || mips || mipsle)

package readwait

import "golang.org/x/sys/unix"

// legacyCalls: these 32-bit architectures have _newselect (select with
// today's arguments; 386's select takes one struct), poll, epoll_wait,
// and the 64-bit time variants a C library with a 64-bit time_t calls.
var legacyCalls = []sysCall{
	{unix.SYS__NEWSELECT, callSelect}, {unix.SYS_POLL, callPoll}, {unix.SYS_EPOLL_WAIT, callEpoll},
	{unix.SYS_PSELECT6_TIME64, callSelect}, {unix.SYS_PPOLL_TIME64, callPoll},
}
