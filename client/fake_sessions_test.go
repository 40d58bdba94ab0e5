//go:build linux

package client

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// fakeSessions plays an agent run with -mode sessions: it reads control
// lines from DIR/in, which its status file names, and the test answers
// each by hand per the wire agreement (protocol/session.go).
type fakeSessions struct {
	*fakeServer[protocol.ParsedControl]
	mode     string
	started  time.Time
	sessions []status.Session
}

// startFakeSessions makes DIR and serves it in sessions mode.
func startFakeSessions(t *testing.T) *fakeSessions {
	t.Helper()
	dir := makeServed(t, t.TempDir(), inName)
	parse := func(line []byte) protocol.ParsedControl { c, _ := protocol.ParseControl(line); return c }
	f := &fakeSessions{fakeServer: startFakeServer(t, dir, inName, parse, func(c protocol.ParsedControl) string { return c.Reply }),
		mode: status.ModeSessions, started: time.Now().UTC()}
	f.writeStatus()
	return f
}

// writeStatus writes the status file: the agent in f.mode, serving DIR/in
// as "in", with f.sessions open.
func (f *fakeSessions) writeStatus() {
	f.t.Helper()
	now := time.Now().UTC()
	s := status.Status{PID: 1, Mode: f.mode, State: "running", StartedAt: f.started, UpdatedAt: now,
		Inputs: map[string]status.FIFO{inName: fifoID(f.t, filepath.Join(f.dir, inName))}, Sessions: f.sessions}
	d, err := sharedir.Open(f.dir, false)
	require.NoError(f.t, err)
	defer d.Close()
	require.NoError(f.t, status.WriteAt(d, statusName, s, 0o644))
}

// fifoID identifies the FIFO at path as a status file does.
func fifoID(t testing.TB, path string) status.FIFO {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	i := fifo.Info{ID: fifo.ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}} // st.Dev is a uint32 on mips
	if f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
		i, err = fifo.Describe(f)
		f.Close()
		require.NoError(t, err)
	}
	return status.FIFO{Dev: i.Dev, Ino: i.Ino, Btime: i.Btime}
}

// answer writes frame, the answer to c, on c's reply FIFO and closes it.
func (f *fakeSessions) answer(c protocol.ParsedControl, frame []byte) {
	f.t.Helper()
	w := f.openReply(c)
	defer w.Close()
	_, err := w.Write(frame)
	require.NoError(f.t, err)
}

// fakeSession is an open session's directory with its FIFOs, and its
// DIR/sessions/NAME/ask read as the engine reads it.
type fakeSession struct {
	dir string // DIR/sessions/NAME
	ask *fakeServer[protocol.ParsedAsk]
}

// openSession makes DIR/sessions/NAME with in, out and ask, serves its
// ask and lists the session in the status file, naming its ask FIFO.
func (f *fakeSessions) openSession(name string) *fakeSession {
	f.t.Helper()
	sd := filepath.Join(f.dir, sessionsName, name)
	require.NoError(f.t, os.MkdirAll(sd, 0o755))
	for _, n := range []string{inName, "out", askName} {
		require.NoError(f.t, unix.Mkfifo(filepath.Join(sd, n), 0o620))
	}
	parse := func(line []byte) protocol.ParsedAsk { a, _ := protocol.ParseAsk(line); return a }
	s := &fakeSession{dir: sd, ask: startFakeReader(f.t, f.dir, filepath.Join(sd, askName), parse, func(a protocol.ParsedAsk) string { return a.Reply })}
	f.sessions = append(f.sessions, status.Session{Name: name, PID: 100 + len(f.sessions), State: "running",
		StartedAt: time.Now().UTC(), Turn: &status.Turn{State: "ready"},
		Inputs: map[string]status.FIFO{askName: fifoID(f.t, filepath.Join(sd, askName)), inName: fifoID(f.t, filepath.Join(sd, inName))}})
	f.writeStatus()
	return s
}
