package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// lastWordsPatience is how long send and ask, once their context is done
// (a signal, their -timeout), still wait for their last line to reach a
// stderr that takes nothing (a pipe whose reader stopped reading, as in
// `ask ... 2>&1 | less`): past it the line is given up and they exit.
const lastWordsPatience = 250 * time.Millisecond

// say writes the line format makes to stderr, as send and ask end. A
// stderr that takes it at once (a terminal, a file, a pipe with room)
// gets it whole; a blocked one gets until ctx is done and then
// lastWordsPatience, so that a blocked stderr never keeps a command from
// exiting on INT, TERM or its -timeout. A write given up is left blocked
// on its goroutine, which the exit that follows ends.
func say(ctx context.Context, format string, args ...any) {
	sayTo(ctx, os.Stderr, fmt.Sprintf(format, args...))
}

func sayTo(ctx context.Context, w io.Writer, line string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.WriteString(w, line)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	t := time.NewTimer(lastWordsPatience)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
