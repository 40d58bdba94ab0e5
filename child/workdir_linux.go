package child

import (
	"os"
	"sync/atomic"
)

// leaving is set by LeaveWorkDirAfterStart until a child has started.
var leaving atomic.Bool

// LeaveWorkDirAfterStart makes the agent change its working directory to
// "/" as soon as the next child has started, so that it pins no mount. The
// agent's paths must be absolute by then, and children that must start in
// the old directory need it as their Spec.Dir; the first child, started
// before the change, has it whatever its Spec says.
func LeaveWorkDirAfterStart() { leaving.Store(true) }

func leaveWorkDir() {
	if leaving.CompareAndSwap(true, false) {
		os.Chdir("/") // "/" is always searchable; nothing to report
	}
}
