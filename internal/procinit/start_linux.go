package procinit

import "github.com/fifobridge/fifobridge/internal/sigreserved"

// Start is the agent's set-up before anything else: it reads the signal
// state the agent inherited, while nothing has changed it yet, makes
// every inherited descriptor above 2 close-on-exec (and points a closed
// 0, 1 or 2 at /dev/null), and catches the runtime's reserved signals
// (sigreserved.Catch). Call it once, first thing, before signal.Notify
// and before any descriptor is opened or any child started.
func Start() (*Signals, error) {
	st, err := inheritedSignals()
	if err != nil {
		return nil, err
	}
	if err := closeInheritedOnExec(); err != nil {
		return nil, err
	}
	if err := sigreserved.Catch(); err != nil {
		return nil, err
	}
	return st, nil
}
