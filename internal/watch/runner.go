package watch

import "sync"

// Runner runs a func in a goroutine of its own each time it is kicked,
// one run at a time: kicks that come while it runs make one more run
// after it. While nothing was kicked, no goroutine runs. It is how a
// watch's func hands its work on without blocking the reader. The zero
// Runner is not usable: make one with NewRunner.
type Runner struct {
	fn func()

	mu      sync.Mutex
	running bool // a goroutine runs fn, or is about to
	again   bool // kicked since the run began
	stopped bool
	wg      sync.WaitGroup
}

// NewRunner returns a Runner of fn.
func NewRunner(fn func()) *Runner { return &Runner{fn: fn} }

// Kick has fn run soon, in a goroutine of the Runner's; it never waits.
// After Stop it does nothing.
func (r *Runner) Kick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.stopped:
	case r.running:
		r.again = true
	default:
		r.running = true
		r.wg.Add(1)
		go r.run()
	}
}

func (r *Runner) run() {
	defer r.wg.Done()
	for {
		r.fn()
		r.mu.Lock()
		if !r.again || r.stopped {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.again = false
		r.mu.Unlock()
	}
}

// Stop makes later kicks do nothing and waits for the run under way, if
// any. It must not be called from fn.
func (r *Runner) Stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.wg.Wait()
}
