//go:build linux

package test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// unlinker removes one entry of a directory the moment inotify reports it
// made, once: a user of DIR racing the agent between its making a FIFO
// and its opening it.
type unlinker struct {
	events  *os.File      // the inotify descriptor, non-blocking: Close ends the read
	removed chan struct{} // closed once the entry was removed
	wg      sync.WaitGroup
}

// unlinkWhenMade watches dir, which must exist, and removes dir/name as
// soon as it is made. The watch ends when t does.
func unlinkWhenMade(t *testing.T, dir, name string) *unlinker {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	u := &unlinker{events: os.NewFile(uintptr(fd), "inotify"), removed: make(chan struct{})}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE); err != nil {
		u.events.Close()
		t.Fatalf("watch %s: %v", dir, err)
	}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		buf := make([]byte, 64<<10)
		for {
			n, err := u.events.Read(buf)
			if err != nil {
				return // closed: the test is over
			}
			if createdNamed(buf[:n], name) && os.Remove(filepath.Join(dir, name)) == nil {
				close(u.removed)
				return
			}
		}
	}()
	t.Cleanup(func() { u.events.Close(); u.wg.Wait() })
	return u
}

// TestAskFIFOUnlinkedAtStart (issue 32, item 4): DIR/ask removed the
// moment the agent makes it, before its conversation opened it, is
// followed as every other FIFO end is: the agent makes it again (it stays
// missing for a second) and serves asks on it, or, when it was removed
// while being made, fails at start with 125. 20 agents, 10 at once (each
// remake waits a second); none of them may end up deaf to asks.
func TestAskFIFOUnlinkedAtStart(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	sh := []string{busybox, "PS1=$ ", "sh", "-i"}
	served := 0
	for range 2 {
		type racer struct {
			a *agent
			u *unlinker
		}
		var racers []racer
		for range 10 {
			dir := filepath.Join(t.TempDir(), "fb")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			u := unlinkWhenMade(t, dir, "ask")
			a := startAgent(t, agentConfig{dir: dir, flags: []string{"-prompt", `^\$ $`, "-stderr", "out"}, program: sh})
			racers = append(racers, racer{a, u})
		}
		for _, r := range racers {
			// Past its start (its FIFOs made), the agent says it serves.
			serving := func() bool { return strings.Contains(r.a.stderr(), "msg=serving") }
			if !eventually(hangTimeout, func() bool { return serving() || r.a.exited() }) {
				t.Fatalf("the agent neither served nor exited; stderr:\n%s", r.a.stderr())
			}
			if !serving() {
				r.a.wait(hangTimeout)
				if r.a.code != 125 || !strings.Contains(r.a.stderr(), "ask") {
					t.Fatalf("agent exited %d, want 125 naming the ask fifo, or serving:\n%s", r.a.code, r.a.stderr())
				}
				continue
			}
			select {
			case <-r.u.removed:
			case <-time.After(hangTimeout):
				t.Fatalf("the agent serves, and its ask fifo was not removed within %v; stderr:\n%s", hangTimeout, r.a.stderr())
			}
			res := runAs(t, nil, nil, "ask", "-dir", r.a.dir, "-wait", "8s", "echo $((6*7))")
			res.requireAnswer(t, "42\n")
			served++
			r.a.stop()
			requireNoReplies(t, r.a.dir)
			if _, err := os.Lstat(filepath.Join(r.a.dir, "ask")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the ask fifo the agent made again is left at its exit: %v", err)
			}
		}
	}
	t.Logf("%d of 20 agents served asks, the others failed at start", served)
}
