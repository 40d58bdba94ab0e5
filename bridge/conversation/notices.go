//go:build linux

package conversation

// notices is how the parts of a conversation say that something changed,
// none of them waiting: the loop that it has something to look at
// (wakeLoop), the status file that it changed (poke), the idle clock that
// asks are being served (activity).
type notices struct {
	wake       chan struct{} // the loop's: one wake waits at most
	onPoke     func()        // Config.Poke, or nil
	onActivity func()        // Config.Activity, or nil
}

// wakeLoop has the loop look again, without waiting.
func (n *notices) wakeLoop() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// poke says the status changed.
func (n *notices) poke() {
	if n.onPoke != nil {
		n.onPoke()
	}
}

// activity tells the idle clock that asks are being served.
func (n *notices) activity() {
	if n.onActivity != nil {
		n.onActivity()
	}
}
