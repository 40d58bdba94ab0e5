package readwait

import (
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// waitForeground waits until the terminal's foreground group is one
// that ok accepts, within bound, and returns it.
func waitForeground(t testing.TB, c *child, ok func(pgid int) bool) int {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		pg, err := tty.Foreground(c.in)
		require.NoError(t, err)
		if ok(pg) {
			return pg
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal's foreground group is still %d", pg)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// TestShellTTY: sh -i on a terminal is seen blocked at its prompt; a job
// it runs in the foreground is the reader while it runs: cat reading the
// terminal is blocked reading it (and the shell, waiting for cat, is
// not), sleep is not.
func TestShellTTY(t *testing.T) {
	checked(t)
	c := startTTY(t, []string{"PS1=ready$ ", "ENV="}, "sh", "-i")
	p := c.probe()
	c.expect("ready$ ")
	sh := c.pid()
	isShell := func(pg int) bool { return pg == sh }
	notShell := func(pg int) bool { return pg != sh && pg > 0 }
	waitForeground(t, c, isShell)
	waitBlocked(t, p, sh, true)
	waitAsleep(t, sh, callRead)

	c.write("cat\n")
	cat := waitForeground(t, c, notShell)
	waitBlocked(t, p, cat, true)
	blocked, err := p.Blocked(sh)
	require.NoError(t, err)
	require.False(t, blocked, "the shell waits for cat: %s", describe(sh))
	c.write("\x04") // ^D: cat's input ends
	c.expect("ready$ ")
	waitForeground(t, c, isShell)
	waitBlocked(t, p, sh, true)

	c.write("sleep 60\n")
	sleep := waitForeground(t, c, notShell)
	waitAsleep(t, sleep, callOther)
	blocked, err = p.Blocked(sleep)
	require.NoError(t, err)
	require.False(t, blocked, "sleep reads nothing")
	require.NoError(t, unix.Kill(sleep, unix.SIGKILL)) // not ^C: SIGINT may have been ignored since the test started
	c.expect("ready$ ")
	waitBlocked(t, p, sh, true)
}

// TestPythonTTY: python3 on a terminal waits in select on the terminal
// (readline's), which is seen as reading it, through the select's read
// set in python's memory; busybox sh waits in poll.
func TestPythonTTY(t *testing.T) {
	checked(t)
	c := startTTY(t, []string{"TERM=dumb"}, python...)
	p := c.probe()
	c.expect(">>> ")
	waitAsleep(t, c.pid(), callSelect)
	waitBlocked(t, p, c.pid(), true)
	c.write("6*7\n")
	c.expect("42\r\n>>> ")
	waitBlocked(t, p, c.pid(), true)

	b := startTTY(t, []string{"TERM=dumb", "PS1=ready$ ", "ENV="}, "busybox", "sh", "-i")
	p = b.probe()
	b.expect("ready$ ")
	waitAsleep(t, b.pid(), callPoll)
	waitBlocked(t, p, b.pid(), true)
}

// TestTerminalNotInput: a probe of one terminal does not see a shell
// blocked reading another.
func TestTerminalNotInput(t *testing.T) {
	checked(t)
	c := startTTY(t, []string{"PS1=ready$ ", "ENV="}, "sh", "-i")
	other := startTTY(t, nil, "cat")
	p := other.probe()
	c.expect("ready$ ")
	waitAsleep(t, c.pid(), callRead)
	blocked, err := p.Blocked(c.pid())
	require.NoError(t, err)
	require.False(t, blocked)
}
