//go:build linux

package test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// replyNames lists DIR/replies.
func replyNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "replies"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestSendOwnFramesOnly (issue 9): a reply FIFO's name is 128 random bits
// in hex, and send takes only frames with its own request id. Frames forged
// into the victim's reply FIFO under another id are ignored, each id
// reported once on stderr, and the request completes normally.
func TestSendOwnFramesOnly(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	tmp := t.TempDir()
	running, proceed := filepath.Join(tmp, "running"), filepath.Join(tmp, "proceed")
	program := append(sh(t, `touch "$1"; while [ ! -e "$2" ]; do sleep 0.01; done; echo real; exit 5`), running, proceed)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: program})
	waitServing(t, a)
	s := startSend(t, a.dir, nil, nil, "x")
	waitFile(t, running)

	names := replyNames(t, a.dir)
	if len(names) != 1 || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(names[0]) {
		t.Fatalf("reply FIFOs %q, want one named by 32 hex digits (128 random bits)", names)
	}
	w := openWriter(t, filepath.Join(a.dir, "replies", names[0]))
	for range 2 {
		w.writeLine(`{"id":"evil","type":"stdout","data":"forged\n"}`)
		w.writeLine(`{"id":"evil","type":"exit","code":0}`)
	}
	w.writeLine(`{"id":"other","type":"error","error":"forged"}`)
	w.writeLine(`not a frame`)
	w.close()
	if err := os.WriteFile(proceed, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	res := s.wait(t, hangTimeout)
	res.requireCode(t, 5)
	if string(res.stdout) != "real\n" {
		t.Fatalf("send printed %q, want %q; stderr:\n%s", res.stdout, "real\n", res.stderr)
	}
	for _, id := range []string{`"evil"`, `"other"`} {
		if n := strings.Count(res.stderr, id); n != 1 {
			t.Errorf("send reported the frames of id %s %d times, want once; stderr:\n%s", id, n, res.stderr)
		}
	}
	requireNoReplies(t, a.dir)
}
