//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/client"
)

// ask's exit code says how the turn ended: the prompt's status, an
// incomplete input (125), a timeout naming a child not ready (124), the
// child's own end; every line but the answer's is one line.
func TestTurnExit(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		res  client.Result
		code int
		line string
	}{
		{client.Result{}, 0, ""},
		{client.Result{Status: n(7)}, 7, ""},
		{client.Result{Status: n(0)}, 0, ""},
		{client.Result{Status: n(300)}, 125, "no exit code"},
		{client.Result{Incomplete: true}, 125, "the input was incomplete"},
		{client.Result{TimedOut: true}, 124, "timed out after 1s; the child was interrupted"},
		{client.Result{TimedOut: true, NotReady: `the child has shown no prompt matching '^NEVER$' since it started 1s ago; its last line is ">>> "`},
			124, `timed out after 1s: the child has shown no prompt matching '^NEVER$' since it started 1s ago; its last line is ">>> "`},
		{client.Result{TimedOut: true, Queued: true}, 124,
			"timed out after 1s: the ask gave up while queued, so nothing was sent to the child and no turn was interrupted for it"},
		{client.Result{TimedOut: true, Queued: true, NotReady: `the child has shown no prompt matching '^NEVER$' since it started 1s ago; its last line is ">>> "`},
			124, `timed out after 1s: the child has shown no prompt matching '^NEVER$' since it started 1s ago; its last line is ">>> "; ` +
				`the ask gave up while queued, so nothing was sent to the child and no turn was interrupted for it`},
		{client.Result{Exited: true, Code: 129}, 129, "the child ended during the turn (exit code 129)"},
		{client.Result{Exited: true}, 0, ""},
	} {
		code, line := turnExit(tc.res, time.Second)
		if code != tc.code || !strings.Contains(line, tc.line) || tc.line == "" && line != "" || strings.Contains(line, "\n") {
			t.Errorf("turnExit(%+v) = %d, %q; want %d, %q", tc.res, code, line, tc.code, tc.line)
		}
	}
}
