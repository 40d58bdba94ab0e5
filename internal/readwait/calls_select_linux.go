//go:build linux && (amd64 || s390x)

package readwait

import "golang.org/x/sys/unix"

// legacyCalls: these architectures have select, poll and epoll_wait, and
// no 32-bit time variants.
var legacyCalls = []sysCall{
	{unix.SYS_SELECT, callSelect}, {unix.SYS_POLL, callPoll}, {unix.SYS_EPOLL_WAIT, callEpoll},
}
