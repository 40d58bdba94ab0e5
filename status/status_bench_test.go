//go:build linux

package status

import (
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/sharedir"
)

// BenchmarkWriteAt rewrites a status file, as the agent does on each
// change and as it starts and exits. Its directory is $TMPDIR's: the file
// system decides most of the cost (see WriteAt).
func BenchmarkWriteAt(b *testing.B) {
	d, err := sharedir.Open(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	s := Status{PID: 1, Mode: "stream", State: "running", StartedAt: time.Now(), In: "/run/fifobridge/in", Out: "/run/fifobridge/out"}
	for b.Loop() {
		if err := WriteAt(d, "status.json", s, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
