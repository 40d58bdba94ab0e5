//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
)

// TestSayBlockedStderr: the last line reaches a stderr that takes it; one
// that takes nothing (a full pipe nobody reads, blocking as a shell's
// stderr is) does not keep a command whose context is done from exiting.
func TestSayBlockedStderr(t *testing.T) {
	leakcheck.Check(t)
	var b bytes.Buffer
	sayTo(context.Background(), &b, "line\n")
	if b.String() != "line\n" {
		t.Fatalf("wrote %q", b.String())
	}

	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	defer w.Close()
	capacity, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, capacity)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	go func() { defer close(done); sayTo(ctx, w, "lost\n") }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("say waited for a stderr that takes nothing")
	}
	r.Close() // ends the write given up (EPIPE), for the leak check
}
