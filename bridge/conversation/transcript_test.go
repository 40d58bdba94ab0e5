//go:build linux

package conversation

import "testing"

// TestTranscriptDropsWhatWaits: offer never waits; what comes while
// transcriptBuffer bytes wait for the writer is dropped and counted.
func TestTranscriptDropsWhatWaits(t *testing.T) {
	tr := newTranscript(nil) // no writer runs: nothing is taken
	chunk := make([]byte, 100<<10)
	for range 4 {
		tr.offer(chunk)
	}
	if got, want := tr.dropped.Load(), uint64(4*len(chunk)-transcriptBuffer); got != want {
		t.Fatalf("dropped %d, want %d", got, want)
	}
	tr.close()
	tr.offer(chunk)
	if got, want := tr.dropped.Load(), uint64(5*len(chunk)-transcriptBuffer); got != want {
		t.Fatalf("after close: dropped %d, want %d", got, want)
	}
}
