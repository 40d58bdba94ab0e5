//go:build linux

package stream

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/internal/readwait"
)

// TestChildReaderSeesAllOutput: a child blocked reading its input counts
// as waiting only once the agent has read all it wrote before, and not
// while the copy holds bytes the conversation has not taken.
func TestChildReaderSeesAllOutput(t *testing.T) {
	leakcheck.Check(t)
	stdin, childIn, err := pipeio.Pipe(false)
	require.NoError(t, err)
	defer stdin.Close()
	out, childOut, err := pipeio.Pipe(true)
	require.NoError(t, err)
	defer out.Close()
	probe, err := readwait.NewProbe(stdin)
	require.NoError(t, err)

	// It writes its prompt and more, then waits for a line; then the same
	// with a prompt alone.
	cmd := exec.Command("sh", "-c", `printf '> more'; read a; printf '> '; read b`)
	cmd.Stdin, cmd.Stdout = childIn, childOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	childIn.Close()
	childOut.Close()
	defer cmd.Wait()
	defer stdin.Close() // before the wait, should the test fail

	var taking sync.Mutex
	r := &childReader{probe: probe, pgid: cmd.Process.Pid, out: out, taking: &taking}
	waitProbe(t, probe, cmd.Process.Pid)
	blocked, err := r.Blocked()
	require.NoError(t, err)
	require.False(t, blocked, "waiting, with output unread")
	readExactly(t, out, "> more")
	blocked, err = r.Blocked()
	require.NoError(t, err)
	require.True(t, blocked, "waiting, all its output read")
	taking.Lock()
	blocked, err = r.Blocked()
	taking.Unlock()
	require.NoError(t, err)
	require.False(t, blocked, "waiting, while the copy holds output not yet taken")

	_, err = stdin.Write([]byte("\n"))
	require.NoError(t, err)
	readExactly(t, out, "> ")
	waitProbe(t, probe, cmd.Process.Pid)
	blocked, err = r.Blocked()
	require.NoError(t, err)
	require.True(t, blocked)
	_, err = stdin.Write([]byte("\n"))
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
}

// waitProbe waits until probe sees group pgid blocked reading its input.
func waitProbe(t *testing.T, probe *readwait.Probe, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		blocked, err := probe.Blocked(pgid)
		require.NoError(t, err)
		if blocked {
			return
		}
		require.True(t, time.Now().Before(deadline), "the child was never seen waiting for input")
		time.Sleep(time.Millisecond)
	}
}

// readExactly reads len(want) bytes of f, within 10 s, and checks them.
func readExactly(t *testing.T, f *os.File, want string) {
	t.Helper()
	f.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(want))
	_, err := io.ReadFull(f, got)
	require.NoError(t, err)
	require.Equal(t, want, string(got))
}

// A probe that cannot be made says what that means where it was wanted:
// for a conversation, that its turns end after -settle; for a session's
// first run alone, only at debug level, and not of turns it has not.
func TestNewProbeSaysWhatItMeans(t *testing.T) {
	leakcheck.Check(t)
	f, err := os.Open(os.DevNull) // neither a pipe nor a terminal: no probe
	require.NoError(t, err)
	defer f.Close()
	for _, turns := range []bool{true, false} {
		var info, debug bytes.Buffer
		log := slog.New(slog.NewTextHandler(&info, nil))
		require.Nil(t, newProbe(f, log, turns))
		require.Nil(t, newProbe(f, slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug})), turns))
		if turns {
			require.Contains(t, debug.String(), "turns end after -settle")
			continue
		}
		require.Empty(t, info.String(), "a first run's missing probe, at info level")
		require.NotContains(t, debug.String(), "turns")
		require.Contains(t, debug.String(), "no read probe")
	}
}
