//go:build linux

package test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

// keptOpenAsks is how many turns TestAskerKeptOpen asks through one
// client.Asker.
const keptOpenAsks = 200

// TestAskerKeptOpen: a client that keeps its FIFOs open (client.Asker)
// asks python3 -i on pipes 200 times through one reply FIFO, and every
// answer is its own; the test process holds as many descriptors after
// the last turn as after the first, and after Close as before the Asker.
// A turn past its limit is interrupted and keeps the reply FIFO; a turn
// the client gives up gives it up, and the next turn is answered all the
// same.
func TestAskerKeptOpen(t *testing.T) {
	// Not parallel: it counts this process's descriptors itself.
	checkLeaks(t, true)
	requirePython(t)
	a := startAgent(t, agentConfig{flags: []string{"-prompt", "^>>> $", "-stderr", "out"}, program: []string{"python3", "-i", "-q"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangTimeout+keptOpenAsks*hangTimeout/100)
	defer cancel()
	if !client.WaitAsking(ctx, a.dir, hangTimeout) {
		t.Fatalf("no agent reads %s/ask", a.dir)
	}
	before := fdCount("self")
	k, err := client.OpenAsker(a.dir, client.AskerOptions{Warn: func(msg string) { t.Errorf("warning: %s", msg) }})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(input string, turn client.Turn) (string, client.Result) {
		t.Helper()
		var out bytes.Buffer
		turn.Input, turn.Stdout = []byte(input), &out
		res, err := k.Ask(ctx, turn)
		if err != nil {
			t.Fatalf("ask %q: %v (answer so far %q)", input, err, out.String())
		}
		return out.String(), res
	}
	held := -1
	for i := range keptOpenAsks {
		got, res := ask(fmt.Sprintf("print(%d * 3)", i), client.Turn{Limit: hangTimeout})
		if want := fmt.Sprintf("%d\n", i*3); got != want || !reflect.DeepEqual(res, client.Result{}) {
			t.Fatalf("turn %d: answer %q, %+v; want %q at the prompt", i, got, res, want)
		}
		if held < 0 {
			held = fdCount("self")
		} else if n := fdCount("self"); n != held {
			t.Fatalf("turn %d: the test process holds %d descriptors, %d after the first turn", i, n, held)
		}
	}

	got, res := ask("import time; time.sleep(30)", client.Turn{Limit: 300 * time.Millisecond})
	if !res.TimedOut || got != "" {
		t.Fatalf("a turn past its limit: %q, %+v; want timed out, no answer", got, res)
	}
	if got, _ := ask("print('after the timeout')", client.Turn{Limit: hangTimeout}); got != "after the timeout\n" {
		t.Fatalf("after a timed-out turn: %q", got)
	}
	gone, giveUp := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = k.Ask(gone, client.Turn{Input: []byte("import time; time.sleep(30)"), Stdout: &bytes.Buffer{}})
	giveUp()
	if err == nil || gone.Err() == nil {
		t.Fatalf("a turn given up by its client: %v", err)
	}
	if got, _ := ask("print('after giving up')", client.Turn{Limit: hangTimeout}); got != "after giving up\n" {
		t.Fatalf("after a turn given up: %q", got)
	}

	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fdCount("self"); n != before {
		t.Fatalf("the test process holds %d descriptors after Close, %d before OpenAsker:\n%s", n, before, fdTargets("self"))
	}
	if ents, err := os.ReadDir(filepath.Join(a.dir, "replies")); err != nil || len(ents) > 0 {
		t.Fatalf("replies/ after Close: %v, %v", ents, err)
	}
}
