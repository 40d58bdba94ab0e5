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

// startKept is the ask part's kept-open client: a client.Asker of the
// conversation rn holds (askArgs), in the harness, as a program that asks
// all day would use it. Each ask is one Ask, gap after the last,
// timed by the harness.
func startKept(rn *running, gap time.Duration) (*asker, error) {
	dir := filepath.Dir(rn.in)
	if !client.WaitAsking(context.Background(), dir, 10*time.Second) {
		rn.stop()
		return nil, fmt.Errorf("no agent reads %s/ask after 10s", dir)
	}
	k, err := client.OpenAsker(dir, client.AskerOptions{})
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
