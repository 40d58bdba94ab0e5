//go:build linux

package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ExitMap is -exit-map: FROM=TO[,FROM=TO...], the agent's exit code TO
// where it would be FROM (tini's -e, generalised). It applies last, to
// every exit code but that of the agent's own failure (125).
type ExitMap map[int]int

func (m *ExitMap) String() string {
	if m == nil || *m == nil {
		return ""
	}
	pairs := make([]string, 0, len(*m))
	for from, to := range *m {
		pairs = append(pairs, fmt.Sprintf("%d=%d", from, to))
	}
	return strings.Join(pairs, ",")
}

// Set parses FROM=TO[,FROM=TO...] with codes 0-255; a FROM given twice
// with different TOs is refused.
func (m *ExitMap) Set(s string) error {
	codes := ExitMap{}
	for _, pair := range strings.Split(s, ",") {
		from, to, ok := strings.Cut(strings.TrimSpace(pair), "=")
		f, ferr := exitCodeArg(from)
		t, terr := exitCodeArg(to)
		if !ok || ferr != nil || terr != nil {
			return fmt.Errorf("want FROM=TO[,FROM=TO...] with exit codes 0-255, got %q", pair)
		}
		if old, dup := codes[f]; dup && old != t {
			return fmt.Errorf("exit code %d is mapped twice (to %d and %d)", f, old, t)
		}
		codes[f] = t
	}
	*m = codes
	return nil
}

func exitCodeArg(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < 0 || v > 255 {
		return 0, fmt.Errorf("not an exit code: %q", s)
	}
	return v, nil
}

// Apply returns the code the agent exits with instead of code.
func (m ExitMap) Apply(code int) int {
	if to, ok := m[code]; ok {
		return to
	}
	return code
}
