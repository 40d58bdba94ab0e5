//go:build linux && (amd64 || arm64)

package sigreserved

// Flags of struct sigaction, the same on amd64 and arm64.
const (
	saRestorer = 0x04000000
	saOnstack  = 0x08000000
	saRestart  = 0x10000000
)

// reservedHandler, reservedRestorer and reservedPCs are in assembly
// (handler_*.s): a signal handler cannot be Go code, which needs the
// goroutine's context that a signal may interrupt at any instruction.

// reservedHandler returns at once.
//
//lint:ignore U1000 reservedPCs takes its address in assembly
func reservedHandler()

// reservedRestorer ends a handler with rt_sigreturn(2).
//
//lint:ignore U1000 reservedPCs takes its address in assembly
func reservedRestorer()

// reservedPCs returns the entry points of reservedHandler and
// reservedRestorer, as the kernel calls them.
func reservedPCs() (handler, restorer uintptr)

// reservedAction is the action of a reserved signal: caught by
// reservedHandler, on the thread's alternate signal stack (the runtime
// gives every thread one; a goroutine's stack may have no room for the
// kernel's signal frame), with interrupted system calls restarted.
func reservedAction() kernelSigaction {
	handler, restorer := reservedPCs()
	return kernelSigaction{handler: handler, flags: saOnstack | saRestart | saRestorer, restorer: restorer}
}
