//go:build linux

package config

import (
	"strings"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/protocol"
)

// Stream mode's child (the empty open line) and a session's come from
// the one place: the run's settings, and a session's own where it
// differs (-session-idle, no controlling terminal, its first run judged);
// a refused line makes none.
func TestEntry(t *testing.T) {
	run := parse(t, "-mode", "sessions", "-prompt", `^\$ $`, "-idle-timeout", "1m", "-session-idle", "2m", "-create=false")
	run.Terminal = &child.Terminal{}
	at := Places{}

	own, err := run.Entry(&protocol.ParsedControl{}, at)
	if err != nil {
		t.Fatal(err)
	}
	if own.IdleTimeout != time.Minute || own.Terminal == nil || own.FirstRun != 0 || own.Log != run.Log ||
		own.Conversation == nil || own.Conversation.Create || own.Child.Program != "sh" {
		t.Errorf("stream mode's child: %+v", own)
	}

	s, err := run.Entry(open(protocol.Control{Tty: ptr(true)}), at)
	if err != nil {
		t.Fatal(err)
	}
	if s.IdleTimeout != 2*time.Minute || s.Terminal != nil || s.FirstRun != SessionFirstRun || !s.Tty ||
		s.Conversation == nil {
		t.Errorf("a session's child: %+v", s)
	}

	if _, err := run.Entry(open(protocol.Control{Args: []string{"-x"}}), at); err == nil || !strings.Contains(err.Error(), "-allow-args") {
		t.Errorf("an open with args and no -allow-args: %v", err)
	}
}
