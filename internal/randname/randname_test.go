package randname

import (
	"regexp"
	"testing"
)

func TestNew(t *testing.T) {
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 1000 {
		n := New()
		if !hex32.MatchString(n) {
			t.Fatalf("%q is not 32 hex digits", n)
		}
		if seen[n] {
			t.Fatalf("%q came twice", n)
		}
		seen[n] = true
	}
}
