//go:build linux && (mips || mipsle || mips64 || mips64le)

package sigreserved

// kernelSigaction is struct sigaction as rt_sigaction(2) takes it on MIPS,
// which keeps IRIX's order: 32-bit flags first, then the handler, then a
// mask of 128 signals.
type kernelSigaction struct {
	flags   uint32
	handler uintptr
	mask    [4]uint32
}

// sigsetSize is the size of the mask, rt_sigaction's last argument.
const sigsetSize = 16
