#include "textflag.h"

// The handler of the reserved signals (see handler_linux.go).

// func reservedHandler()
TEXT ·reservedHandler(SB), NOSPLIT|NOFRAME, $0-0
	RET

// func reservedRestorer()
TEXT ·reservedRestorer(SB), NOSPLIT|NOFRAME, $0-0
	MOVQ $15, AX // rt_sigreturn
	SYSCALL
	INT  $3      // not reached

// func reservedPCs() (handler, restorer uintptr)
TEXT ·reservedPCs(SB), NOSPLIT, $0-16
	LEAQ ·reservedHandler(SB), AX
	MOVQ AX, handler+0(FP)
	LEAQ ·reservedRestorer(SB), AX
	MOVQ AX, restorer+8(FP)
	RET
