//go:build linux && (386 || amd64 || arm || arm64 || ppc64 || ppc64le || s390x)

package sigreserved

// kernelSigaction is struct sigaction as rt_sigaction(2) takes it on the
// architectures that have sa_restorer: handler, flags, restorer, and a
// mask of 64 signals.
type kernelSigaction struct {
	handler  uintptr
	flags    uintptr
	restorer uintptr
	mask     uint64
}

// sigsetSize is the size of the mask, rt_sigaction's last argument.
const sigsetSize = 8
