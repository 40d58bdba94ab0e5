//go:build linux

package client

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
)

// TestAskSession: ask -session writes its line into the session's own
// DIR/sessions/NAME/ask, never DIR/in, and relays the answer.
func TestAskSession(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	f.openSession("sh1")
	py := f.openSession("py")
	var out bytes.Buffer
	call := startControl(t, func() (Result, error) {
		return Ask(context.Background(), AskOptions{Dir: f.dir, Session: "py", Input: []byte("print(6*7)"), Stdout: &out})
	})
	a := py.ask.next()
	require.Equal(t, "print(6*7)", a.Input)
	w := py.ask.openReply(a)
	b := protocol.AppendData(nil, a.ID, protocol.FrameAnswer, []byte("42\n"))
	b = protocol.AppendEnd(b, a.ID, protocol.End{})
	_, err := w.Write(b)
	require.NoError(t, err)
	w.Close()
	_, err = call.wait(t)
	require.NoError(t, err)
	require.Equal(t, "42\n", out.String())
	f.requireNothingRead()
	requireNoReplies(t, f.dir)
}

// TestAskSessionRefused: an ask of a session is written only into the
// ask FIFO the status file names for that session, reached from DIR
// through descriptors; else it fails and nothing is written anywhere.
// OpenAsker of the session refuses the same, as Ask does.
func TestAskSessionRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		session string
		setup   func(t *testing.T, f *fakeSessions, s *fakeSession)
		want    error
		msg     string
	}{
		{"not open", "none", nil, ErrNoSession, "session none is not open"},
		{"no sessions directory", "sh1", func(t *testing.T, f *fakeSessions, s *fakeSession) {
			require.NoError(t, os.Rename(filepath.Join(f.dir, sessionsName), filepath.Join(f.dir, "gone")))
		}, ErrNoSession, "is not open"},
		{"invalid name", "../sessions/sh1", nil, nil, "invalid session name"},
		{"hidden name", ".sh1", nil, nil, "invalid session name"},
		{"symlink planted at DIR/sessions/NAME", "evil", func(t *testing.T, f *fakeSessions, s *fakeSession) {
			require.NoError(t, os.Symlink(s.dir, filepath.Join(f.dir, sessionsName, "evil")))
		}, nil, "symbolic link"},
		{"symlink planted at DIR/sessions", "sh1", func(t *testing.T, f *fakeSessions, s *fakeSession) {
			sessions := filepath.Join(f.dir, sessionsName)
			require.NoError(t, os.Rename(sessions, filepath.Join(f.dir, "real")))
			require.NoError(t, os.Symlink("real", sessions))
		}, nil, "symbolic link"},
		{"the status file names another FIFO", "sh1", func(t *testing.T, f *fakeSessions, s *fakeSession) {
			f.sessions[0].Inputs[askName] = f.sessions[0].Inputs[inName]
			f.writeStatus()
		}, errNotServed, "is not the FIFO the agent serves as ask of session sh1"},
		{"the status file does not list it", "sh1", func(t *testing.T, f *fakeSessions, s *fakeSession) {
			f.sessions = nil
			f.writeStatus()
		}, errUntold, "lists no session sh1"},
		{"the status file names no ask FIFO", "sh1", func(t *testing.T, f *fakeSessions, s *fakeSession) {
			delete(f.sessions[0].Inputs, askName)
			f.writeStatus()
		}, errUntold, "names no FIFO served as ask of session sh1"},
		{"no prompt", "sh1", func(t *testing.T, f *fakeSessions, s *fakeSession) {
			require.NoError(t, os.Rename(filepath.Join(s.dir, askName), filepath.Join(s.dir, "ask.old")))
		}, ErrNoConversation, "session sh1 has no prompt"},
		{"a regular file as ask", "sh1", func(t *testing.T, f *fakeSessions, s *fakeSession) {
			require.NoError(t, os.Rename(filepath.Join(s.dir, askName), filepath.Join(s.dir, "ask.old")))
			require.NoError(t, os.WriteFile(filepath.Join(s.dir, askName), nil, 0o600))
		}, ErrNoConversation, "not a fifo"},
		{"exec mode", "sh1", func(t *testing.T, f *fakeSessions, s *fakeSession) { f.mode = "exec"; f.writeStatus() },
			ErrNotSessions, "ask -session needs an agent run with -mode sessions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			f := startFakeSessions(t)
			s := f.openSession("sh1")
			if tc.setup != nil {
				tc.setup(t, f, s)
			}
			_, err := Ask(context.Background(), AskOptions{Dir: f.dir, Session: tc.session, Input: []byte("x")})
			_, aerr := OpenAsker(f.dir, AskerOptions{Session: tc.session})
			for _, err := range []error{err, aerr} {
				require.Error(t, err)
				if tc.want != nil {
					require.ErrorIs(t, err, tc.want)
				}
				require.ErrorContains(t, err, tc.msg)
			}
			s.ask.requireNothingRead()
			f.requireNothingRead()
			requireNoReplies(t, f.dir)
		})
	}
}

// TestAskSessionClosedWhileWaiting: an ask whose line the session never
// read (it was closed: its FIFO has no reader, the status file no longer
// lists it) ends with ErrNoSession instead of waiting on.
func TestAskSessionClosedWhileWaiting(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	s := f.openSession("sh1")
	call := startControl(t, func() (Result, error) {
		return Ask(context.Background(), AskOptions{Dir: f.dir, Session: "sh1", Input: []byte("x")})
	})
	s.ask.next()
	s.ask.stopReading()
	f.sessions = nil
	f.writeStatus()
	_, err := call.wait(t)
	require.ErrorIs(t, err, ErrNoSession)
	require.ErrorContains(t, err, "session sh1 was closed")
	requireNoReplies(t, f.dir)
}

// TestSessionsAgentRefusesSendAndAsk: send, and ask without -session,
// to an agent in sessions mode write nothing and say why.
func TestSessionsAgentRefusesSendAndAsk(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	// A DIR/ask an agent of another mode left behind is not asked.
	require.NoError(t, unix.Mkfifo(filepath.Join(f.dir, askName), 0o600))
	_, err := Send(context.Background(), Options{Dir: f.dir, Stdin: []byte("x\n")})
	require.ErrorContains(t, err, "runs in sessions mode; send needs -mode exec")
	_, err = Ask(context.Background(), AskOptions{Dir: f.dir, Input: []byte("x")})
	require.ErrorIs(t, err, ErrNoConversation)
	require.ErrorContains(t, err, "runs in sessions mode; ask needs -session NAME")
	_, err = OpenAsker(f.dir, AskerOptions{})
	require.ErrorIs(t, err, ErrNoConversation)
	f.requireNothingRead()
	requireNoReplies(t, f.dir)
}

// TestUnreadyNoteSession: the note of an ask of a session that timed
// out is that session's, not the top level's.
func TestUnreadyNoteSession(t *testing.T) {
	f := startFakeSessions(t)
	f.openSession("sh1")
	f.openSession("py")
	f.sessions[0].Turn.Unready = &status.Unready{Prompt: "^\\$ $", Since: status.SinceStart, At: time.Now(), LastLine: "loading"}
	f.writeStatus()
	d, err := enterDir(f.dir, ErrNoAgent, "")
	require.NoError(t, err)
	defer d.Close()
	require.Contains(t, unreadyNote(input{dir: d, session: "sh1"}), `its last line is "loading"`)
	require.Empty(t, unreadyNote(input{dir: d, session: "py"}))
	require.Empty(t, unreadyNote(dirInput(d, askName)))
}

// answerSession answers a, an ask of session s, with data and an end
// frame, on its reply FIFO opened for the turn and closed after it.
func answerSession(t *testing.T, s *fakeSession, a protocol.ParsedAsk, data string) {
	t.Helper()
	w := s.ask.openReply(a)
	defer w.Close()
	b := protocol.AppendData(nil, a.ID, protocol.FrameAnswer, []byte(data))
	_, err := w.Write(protocol.AppendEnd(b, a.ID, protocol.End{}))
	require.NoError(t, err)
}

// TestAskerSession: an Asker of a session writes every turn into that
// session's DIR/sessions/NAME/ask, never another session's nor DIR/in,
// through one reply FIFO, holds no more descriptors from turn to turn,
// and lets go of everything at Close.
func TestAskerSession(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	sh := f.openSession("sh1")
	py := f.openSession("py")
	a, err := OpenAsker(f.dir, AskerOptions{Session: "py"})
	require.NoError(t, err)
	fds := leakcheck.FDs(t)
	var reply string
	for i := range 5 {
		s := startTurn(t, context.Background(), a, Turn{Input: []byte(fmt.Sprintf("print(%d)", i))})
		q := py.ask.next()
		require.Equal(t, fmt.Sprintf("print(%d)", i), q.Input)
		if reply == "" {
			reply = q.Reply
		}
		require.Equal(t, reply, q.Reply, "one reply FIFO for every turn")
		answerSession(t, py, q, fmt.Sprintf("%d\n", i))
		require.NoError(t, s.wait(t).err)
		require.Equal(t, fmt.Sprintf("%d\n", i), s.stdout.String())
		if i == 0 {
			fds-- // the keeper went at the first frame
		}
		require.Equal(t, fds, leakcheck.FDs(t), "turn %d: descriptors", i)
	}
	sh.ask.requireNothingRead()
	f.requireNothingRead()
	require.NoError(t, a.Close())
	requireNoReplies(t, f.dir)
}

// TestAskerSessionClosed: a turn to a session that was closed (nobody
// reads its ask FIFO, its directory is gone, the status file no longer
// lists it) is ErrNoSession, and so is every turn until a session of
// that name is open again: then the Asker enters its new directory and
// the turn is answered there.
func TestAskerSessionClosed(t *testing.T) {
	checkLeaks(t)
	f := startFakeSessions(t)
	py := f.openSession("py")
	a, err := OpenAsker(f.dir, AskerOptions{Session: "py"})
	require.NoError(t, err)
	defer a.Close()
	s := startTurn(t, context.Background(), a, Turn{Input: []byte("1")})
	answerSession(t, py, py.ask.next(), "one\n")
	require.NoError(t, s.wait(t).err)

	py.ask.stopReading()
	require.NoError(t, os.RemoveAll(py.dir))
	f.sessions = nil
	f.writeStatus()
	for range 2 {
		_, err = a.Ask(context.Background(), Turn{Input: []byte("2")})
		require.ErrorIs(t, err, ErrNoSession)
	}

	py = f.openSession("py")
	s = startTurn(t, context.Background(), a, Turn{Input: []byte("3")})
	q := py.ask.next()
	require.Equal(t, "3", q.Input)
	answerSession(t, py, q, "three\n")
	require.NoError(t, s.wait(t).err)
	require.Equal(t, "three\n", s.stdout.String())
}
