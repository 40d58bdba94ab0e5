//go:build linux && !(amd64 || s390x || 386 || arm || mips || mipsle || mips64 || mips64le || ppc64 || ppc64le)

package readwait

// legacyCalls: the architectures of the generic system call table
// (arm64, loong64, riscv64) have no select, poll or epoll_wait: their C
// libraries call pselect6, ppoll and epoll_pwait.
var legacyCalls []sysCall
