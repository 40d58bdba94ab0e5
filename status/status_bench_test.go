//go:build linux

package status

import (
	"encoding/json"
	"fmt"
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

// BenchmarkReadSession decodes a status file of 100 sessions as a client
// does to look one up (decode, Session), against encoding/json decoding
// it whole, which costs what the sessions open cost.
func BenchmarkReadSession(b *testing.B) {
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	file, err := sessionsFile(names, `^\$ $`, "$ ").MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("lazy", func(b *testing.B) {
		for b.Loop() {
			s, err := decode(file)
			if _, ok := s.Session("s50"); err != nil || !ok {
				b.Fatal(err)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			var s Status
			if err := json.Unmarshal(file, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
