#include "textflag.h"

// The handler of the reserved signals (see handler_linux.go).

// func reservedHandler()
TEXT ·reservedHandler(SB), NOSPLIT|NOFRAME, $0-0
	RET

// func reservedRestorer()
TEXT ·reservedRestorer(SB), NOSPLIT|NOFRAME, $0-0
	MOVD $139, R8 // rt_sigreturn
	SVC

// func reservedPCs() (handler, restorer uintptr)
TEXT ·reservedPCs(SB), NOSPLIT, $0-16
	MOVD $·reservedHandler(SB), R0
	MOVD R0, handler+0(FP)
	MOVD $·reservedRestorer(SB), R0
	MOVD R0, restorer+8(FP)
	RET
