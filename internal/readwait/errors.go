//go:build linux

package readwait

import "errors"

// ErrCannotSee is wrapped by every error of a probe: this agent cannot see
// whether the child's input has a blocked reader (/proc is not readable
// for the process, shows another PID namespace or hides the process, or
// the process runs another ABI than any this agent reads). The
// conversation then waits -settle; the error is worth one log line per
// child, not one per probe.
var ErrCannotSee = errors.New("cannot see whether the child is blocked reading its input")
