//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

// askSession is the session askKeptSess opens and asks.
const askSession = "py"

// startKept is the ask part's kept-open client: a client.Asker of the
// conversation rn holds (askArgs), or of its session session, in the
// harness, as a program that asks all day would use it. Each ask is one
// Ask, gap after the last, timed by the harness.
func startKept(rn *running, session string, gap time.Duration) (*asker, error) {
	dir := filepath.Dir(rn.in)
	k, err := client.OpenAsker(dir, client.AskerOptions{Session: session})
	if err != nil {
		rn.stop()
		return nil, err
	}
	ask := func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out strings.Builder
		res, err := k.Ask(ctx, client.Turn{Input: []byte(askQuestion), Limit: time.Minute, Stdout: &out})
		if err == nil && (res.Code != 0 || res.Signal != "" || res.TimedOut || res.Exited || res.Incomplete || res.NotReady != "") {
			err = fmt.Errorf("the turn ended %+v, not at the prompt", res)
		}
		return out.String(), err
	}
	stop := func() error { return errors.Join(k.Close(), rn.stop()) }
	return &asker{ask: timedAfter(gap, ask), want: askAnswer, close: stop}, nil
}

// startKeptConversation waits until the agent rn started (askArgs) reads
// DIR/ask, and starts a kept-open client of it.
func startKeptConversation(rn *running, gap time.Duration) (*asker, error) {
	dir := filepath.Dir(rn.in)
	if !client.WaitAsking(context.Background(), dir, 10*time.Second) {
		rn.stop()
		return nil, fmt.Errorf("no agent reads %s/ask after 10s", dir)
	}
	return startKept(rn, "", gap)
}

// startKeptSession waits until the sessions agent rn started
// (askSessArgs) is healthy, opens session askSession of python3 -i with
// `fifobridge open`, which returns at its first prompt, and starts a
// kept-open client of it.
func (b *bench) startKeptSession(rn *running, gap time.Duration) (*asker, error) {
	dir := filepath.Dir(rn.in)
	for _, argv := range [][]string{{b.bin, "health", "-dir", dir, "-wait", "30s"}, {b.bin, "open", "-dir", dir, askSession}} {
		if _, err := output(argv); err != nil {
			rn.stop()
			return nil, fmt.Errorf("session %s: %w", askSession, err)
		}
	}
	return startKept(rn, askSession, gap)
}
