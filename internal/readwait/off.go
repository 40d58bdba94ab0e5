//go:build linux

package readwait

import (
	"errors"
	"os"
)

// OffEnv names the variable whose value 0 turns the probe off: NewProbe
// then fails with ErrOff, and every turn waits -settle, as where this
// agent cannot see. It is read once, at start. The probe is a speed
// trick: it changes when a turn ends, never what the answer is, and the
// switch is there to tell the two apart when a turn ends too soon.
const OffEnv = "FIFOBRIDGE_READ_PROBE"

// off is whether OffEnv was 0 at start.
var off = os.Getenv(OffEnv) == "0"

// ErrOff is NewProbe's error when the probe is turned off (OffEnv=0).
var ErrOff = errors.New("the read probe is off (" + OffEnv + "=0)")
