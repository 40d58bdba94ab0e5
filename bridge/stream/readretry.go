//go:build linux

package stream

import (
	"log/slog"
	"time"
)

// A copy loop of stream mode (the child's output or terminal to the output
// FIFO, the input FIFO to the terminal) tries a failed read again rather
// than stop at once: stopping would leave the child blocked on a full pipe.
// readRetry bounds that, in log lines and in retries. The loop's first
// failure is logged; the ones after it are only counted, and the count is
// logged once as the loop ends. After maxReadFailures failures in a row
// the loop gives up, and says so.
const (
	readRetryPause  = 10 * time.Millisecond
	maxReadFailures = 100 // a second of failures in a row
)

type readRetry struct {
	log      *slog.Logger
	what     string // "reading the child's output", for the log
	failures int    // in all
	inRow    int
}

// again counts err, waits readRetryPause and reports true; at the
// maxReadFailures-th failure in a row it logs that the loop gives up and
// reports false.
func (r *readRetry) again(err error) bool {
	r.failures++
	r.inRow++
	if r.failures == 1 {
		r.log.Warn(r.what+" failed; trying again (further failures are counted, not logged)", "err", err)
	}
	if r.inRow >= maxReadFailures {
		r.log.Error(r.what+" keeps failing; giving up", "failures", r.inRow, "err", err)
		return false
	}
	time.Sleep(readRetryPause)
	return true
}

// ok ends a run of failures: a read worked.
func (r *readRetry) ok() { r.inRow = 0 }

// end logs how many failures there were in all, if more than the first.
func (r *readRetry) end() {
	if r.failures > 1 && r.inRow < maxReadFailures {
		r.log.Warn(r.what+" failed and was tried again", "failures", r.failures)
	}
}
