//go:build linux && (mips64 || mips64le || ppc64 || ppc64le)

package readwait

import "golang.org/x/sys/unix"

// legacyCalls: these architectures have _newselect (their select), poll
// and epoll_wait.
var legacyCalls = []sysCall{
	{unix.SYS__NEWSELECT, callSelect}, {unix.SYS_POLL, callPoll}, {unix.SYS_EPOLL_WAIT, callEpoll},
}
