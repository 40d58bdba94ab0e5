package procinit

import "os"

// LeaveWorkDir changes the agent's working directory to "/", so that it
// pins no mount. Call it once every path the agent keeps is absolute, and
// children are given the old directory as their child.Spec.Dir. "/" is
// always searchable: there is nothing to report.
func LeaveWorkDir() { os.Chdir("/") }
