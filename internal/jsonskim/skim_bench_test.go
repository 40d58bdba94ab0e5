package jsonskim

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkElements skims an array of 100 objects shaped like the status
// file's sessions (half a kilobyte each), as a client's read of one
// session, or ls, skims it.
func BenchmarkElements(b *testing.B) {
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range 100 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"name":"s%03d","pid":%d,"state":"running","started_at":"2026-11-29T08:03:02.648435502Z","restarts":0,"tty":true,`+
			`"child":{"pid":%d,"starts":1,"restarts":0,"recent_restarts":0,"restart_window":"1m0s","quick_exits":0,"crash_loop":false,"last_exit":null,"tty":{"cols":80,"rows":24}},`+
			`"turn":{"state":"ready","queued":0,"answered":0,"timed_out":0,"incomplete":0},"transcript":{"written":10,"dropped":0},`+
			`"inputs":{"ask":{"dev":65024,"ino":10005137,"btime":1795939382649234421},"in":{"dev":65024,"ino":10003935,"btime":1795939382648718363}}}`, i, 1000+i, 1000+i)
	}
	sb.WriteByte(']')
	arr := []byte(sb.String())
	b.SetBytes(int64(len(arr)))
	for b.Loop() {
		n := 0
		if err := Elements(arr, func([]byte) bool { n++; return false }); err != nil || n != 100 {
			b.Fatal(err, n)
		}
	}
}
