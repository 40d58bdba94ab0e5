//go:build linux && (riscv64 || loong64)

package sigreserved

// kernelSigaction is struct sigaction as rt_sigaction(2) takes it on the
// architectures without sa_restorer (the kernel returns from a handler
// through its vDSO): handler, flags, and a mask of 64 signals.
type kernelSigaction struct {
	handler uintptr
	flags   uintptr
	mask    uint64
}

// sigsetSize is the size of the mask, rt_sigaction's last argument.
const sigsetSize = 8
