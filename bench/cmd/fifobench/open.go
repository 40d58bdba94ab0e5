//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// openReader opens the FIFO at path for reading, waiting like open(2) until
// a writer opens the other end, or until ctx is done.
func openReader(ctx context.Context, path string) (*os.File, error) {
	return openWaiting(ctx, path, os.O_RDONLY)
}

// openWriter opens the FIFO at path for writing, waiting until a reader
// opens the other end, or until ctx is done.
func openWriter(ctx context.Context, path string) (*os.File, error) {
	return openWaiting(ctx, path, os.O_WRONLY)
}

// openWaiting is a blocking open(2) run on its own goroutine. On
// cancellation it opens the FIFO O_RDWR|O_NONBLOCK, which counts as both a
// reader and a writer and so completes the pending open; both files are
// then closed, and no thread stays stuck in open(2). The benchmark's FIFOs
// are its own, so the path is trusted (the agent's opens in package fifo
// pin the inode instead).
func openWaiting(ctx context.Context, path string, flag int) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open fifo %s: %w", path, err)
	}
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := os.OpenFile(path, flag|syscall.O_CLOEXEC, 0)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-ctx.Done():
	}
	kick, kerr := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	r := <-done
	if kerr == nil {
		kick.Close()
	}
	if r.err == nil {
		r.f.Close()
	}
	return nil, fmt.Errorf("open fifo %s: %w", path, ctx.Err())
}
