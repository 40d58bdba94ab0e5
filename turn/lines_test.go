package turn

import (
	"strings"
	"testing"
)

// TestLines: a Lines quotes the last line that showed anything, escapes
// and carriage returns removed, at most MaxLastLine bytes, however the
// output was cut into writes, and holds little of a long output.
func TestLines(t *testing.T) {
	long := strings.Repeat("x", 3*MaxHold) + "\n"
	for _, tc := range []struct {
		name, out, want string
	}{
		{"nothing", "", ""},
		{"env", "env: 'bsh': No such file or directory\n", "env: 'bsh': No such file or directory"},
		{"the last of several", "one\ntwo\n\n", "two"},
		{"a line without its newline", "one\ntw", "tw"},
		{"escapes and carriage returns", "\x1b[31msh: 1: bsh: not found\x1b[0m\r\n", "sh: 1: bsh: not found"},
		{"a title, then text", "\x1b]0;title\x07ok\r\n", "ok"},
		{"long", long, strings.Repeat("x", MaxLastLine)},
		{"long, then a short one", long + "done\n", "done"},
		{"long without its newline", long[:len(long)-1] + strings.Repeat("y", 3*MaxHold), strings.Repeat("y", MaxLastLine)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{1, 3, len(tc.out) + 1} {
				l := NewLines()
				for p := []byte(tc.out); len(p) > 0; {
					n := min(size, len(p))
					l.Write(p[:n])
					p = p[n:]
				}
				if got := l.Last(); got != tc.want {
					t.Errorf("in writes of %d: Last %q, want %q", size, got, tc.want)
				}
				if held, most := cap(l.t.buf), 2*(MaxHold+linesPiece); held > most { // append may double
					t.Errorf("in writes of %d: it holds %d bytes, want at most %d", size, held, most)
				}
				if kept, most := cap(l.t.ln.text), 2*(MaxHold+MaxHold/4); kept > most {
					t.Errorf("in writes of %d: it keeps %d bytes of a line, want at most %d", size, kept, most)
				}
			}
		})
	}
}
