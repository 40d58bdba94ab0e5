//go:build linux

package test

import (
	"slices"
	"testing"
)

// The status file says what the answers said: once an open is answered
// it lists the session, once a close is answered it no longer does, so
// that `health -session` right after either agrees with it.
func TestSessionsStatusFollowsAnswers(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startSessions(t, []string{"-stderr", "out"}, []string{"/bin/sh", "-i"})
	names := func() []string {
		var got []string
		for _, s := range a.statusSessions() {
			name, _ := s["name"].(string)
			got = append(got, name)
		}
		return got
	}
	for i := range 20 {
		a.mustOpen("s", map[string]any{"prompt": shPrompt, "tty": i%2 == 0})
		if got := names(); !slices.Equal(got, []string{"s"}) {
			t.Fatalf("cycle %d: the status file lists %v right after the open was answered", i, got)
		}
		if f := a.closeSession("s"); f.typ() != "closed" {
			t.Fatalf("cycle %d: close: %v", i, f)
		}
		if got := names(); len(got) != 0 {
			t.Fatalf("cycle %d: the status file lists %v right after the close was answered", i, got)
		}
	}
}
