//go:build linux

package stream

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/bridge/conversation"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/internal/testlog"
	"github.com/fifobridge/fifobridge/sharedir"
)

// TestReadRetryBounded: a copy loop whose reads fail every time (its
// source is a directory: EISDIR, or EINVAL for splice) logs the first
// failure and that it gives up, not one line per retry, and gives up by
// itself; the stream's loops close their end of the child's pipe then.
func TestReadRetryBounded(t *testing.T) {
	d, err := sharedir.Open(t.TempDir(), false)
	require.NoError(t, err)
	defer d.Close()
	_, err = fifo.MakeAt(d, "out", 0o600)
	require.NoError(t, err)
	sink, err := fifo.OpenSinkAt(d, "out")
	require.NoError(t, err)
	defer sink.Close()

	for _, tc := range []struct {
		name   string
		closes bool // the loop closes the source when it gives up
		// run returns the loop, and how to ask it to finish.
		run func(cfg *Config, src *os.File) (body, finish func())
	}{
		{"stream", true, func(cfg *Config, src *os.File) (func(), func()) {
			s := &Engine{cfg: cfg, sink: sink}
			w := newWiring(nil, nil, src)
			return func() { s.copyOut(w) }, func() { w.unwiring.Store(true) }
		}},
		{"stream with -tee", true, func(cfg *Config, src *os.File) (func(), func()) {
			s := &Engine{cfg: cfg, sink: sink, tee: &teeOut{}}
			w := newWiring(nil, nil, src)
			return func() { s.copyOut(w) }, func() { w.unwiring.Store(true) }
		}},
		{"conversation", true, func(cfg *Config, src *os.File) (func(), func()) {
			cfg.Conversation = &conversation.Config{}
			s := &Engine{cfg: cfg, sink: sink, talk: quiet{}}
			w := newWiring(nil, nil, src)
			return func() { s.copyOut(w) }, func() { w.unwiring.Store(true) }
		}},
		{"terminal", false, func(cfg *Config, src *os.File) (func(), func()) {
			term := newTerminal(cfg, nil, sink, nil, nil)
			w := &ttyWiring{output: src, spin: pipeio.NewReadSpinner(src)}
			return func() { term.copyOut(w) }, func() { w.unwiring.Store(true) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testlog.Buffer{}
			cfg := &Config{Log: slog.New(slog.NewTextHandler(logs, nil))}
			src, err := os.Open(t.TempDir())
			require.NoError(t, err)
			defer src.Close()
			gaveUp := runLoop(tc.run(cfg, src))
			require.True(t, gaveUp, "the loop kept trying for %v; log:\n%s", giveUpWithin, logs)
			lines := strings.Count(logs.String(), "\n")
			require.LessOrEqual(t, lines, 2, "log lines for failures that were all alike:\n%s", logs)
			require.Contains(t, logs.String(), "giving up")
			if tc.closes {
				require.ErrorIs(t, src.Close(), os.ErrClosed, "the loop did not close the child's pipe")
			}
		})
	}
}

// giveUpWithin is how long a loop of TestReadRetryBounded may take to give
// up: maxReadFailures pauses, and room for a loaded machine.
const giveUpWithin = maxReadFailures*readRetryPause + 5*time.Second

// runLoop runs body until it returns by itself, or for giveUpWithin and
// then until finish made it return; it reports whether body returned by
// itself.
func runLoop(body, finish func()) bool {
	done := make(chan struct{})
	go func() { defer close(done); body() }()
	select {
	case <-done:
		return true
	case <-time.After(giveUpWithin):
		finish()
		<-done
		return false
	}
}
