//go:build linux

package client

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// servedDir is a DIR with the input FIFOs in and ask, each held open for
// reading as an agent holds them.
type servedDir struct {
	path    string
	d       *sharedir.Dir
	readers map[string]*os.File
	id      map[string]fifo.ID
}

func newServedDir(t *testing.T) *servedDir {
	t.Helper()
	s := &servedDir{path: t.TempDir(), readers: map[string]*os.File{}, id: map[string]fifo.ID{}}
	for _, name := range []string{inName, askName} {
		p := filepath.Join(s.path, name)
		require.NoError(t, unix.Mkfifo(p, 0o620))
		require.NoError(t, unix.Chmod(p, 0o620))
		r, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK, 0)
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		s.readers[name] = r
		i, err := fifo.Describe(r)
		require.NoError(t, err)
		if i.Btime == 0 { // a file system that keeps none: the cases need one
			i.Btime = int64(len(s.id) + 1)
		}
		s.id[name] = i.ID
	}
	var err error
	s.d, err = sharedir.Enter(s.path)
	require.NoError(t, err)
	t.Cleanup(func() { s.d.Close() })
	return s
}

// writeStatus writes the status file naming inputs, with mode, owned by
// uid.
func (s *servedDir) writeStatus(t *testing.T, inputs map[string]fifo.ID, mode os.FileMode, uid int) {
	t.Helper()
	st := status.Status{Mode: "stream", State: "running"}
	for name, id := range inputs {
		if st.Inputs == nil {
			st.Inputs = map[string]status.FIFO{}
		}
		st.Inputs[name] = status.FIFO{Dev: id.Dev, Ino: id.Ino, Btime: id.Btime}
	}
	d, err := sharedir.Open(s.path, false)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, status.WriteAt(d, statusName, st, mode))
	require.NoError(t, os.Lchown(filepath.Join(s.path, statusName), uid, -1))
}

// describe describes the FIFO name of s.
func (s *servedDir) describe(t *testing.T, name string) fifo.Info {
	t.Helper()
	return fifo.Info{ID: s.id[name], Uid: uint32(os.Geteuid()), Mode: unix.S_IFIFO | 0o620, Nlink: 1}
}

// requireUnread fails t if anything was written into s's FIFOs.
func (s *servedDir) requireUnread(t *testing.T) {
	t.Helper()
	for name, r := range s.readers {
		n, _ := r.Read(make([]byte, 1)) // non-blocking: EOF or EAGAIN when empty
		require.Zero(t, n, "something was written into %s", name)
	}
}

// TestCheckServed: a request goes into an input FIFO only when the
// agent's status file names that very FIFO under that name, or, where
// nobody else may rename DIR's entries, when the status file names no
// other. A status file someone else could have written names nothing.
func TestCheckServed(t *testing.T) {
	me := os.Geteuid()
	for _, tc := range []struct {
		name    string
		inputs  map[string]string // role: the FIFO the status file names; nil: no file
		mode    os.FileMode
		owner   int
		renamed bool // key.othersRename
		reborn  bool // the status file names an earlier FIFO of that inode number
		want    error
	}{
		{"names it", map[string]string{inName: inName, askName: askName}, 0o640, me, true, false, nil},
		{"names it, closed DIR", map[string]string{inName: inName}, 0o640, me, false, false, nil},
		{"swapped", map[string]string{inName: askName, askName: inName}, 0o640, me, true, false, errNotServed},
		{"swapped, closed DIR", map[string]string{inName: askName, askName: inName}, 0o640, me, false, false, errNotServed},
		{"an earlier FIFO of its inode number", map[string]string{inName: inName}, 0o640, me, true, true, errNotServed},
		{"no status file", nil, 0, 0, true, false, errUntold},
		{"no status file, closed DIR", nil, 0, 0, false, false, nil},
		{"names no input (older agent)", map[string]string{}, 0o640, me, true, false, errUntold},
		{"names no input, closed DIR", map[string]string{}, 0o640, me, false, false, nil},
		{"another user's status", map[string]string{inName: inName}, 0o640, me + 1, true, false, errUntold},
		{"another user's status, closed DIR", map[string]string{inName: askName}, 0o640, me + 1, false, false, nil},
		{"a status the group may write", map[string]string{inName: inName}, 0o660, me, true, false, errUntold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServedDir(t)
			if tc.inputs != nil {
				inputs := map[string]fifo.ID{}
				for role, name := range tc.inputs {
					inputs[role] = s.id[name]
					if tc.reborn {
						inputs[role] = fifo.ID{Ino: s.id[name].Ino, Btime: s.id[name].Btime + 1}
					}
				}
				s.writeStatus(t, inputs, tc.mode, tc.owner)
			}
			key := replyKey{agent: uint32(me), othersRename: tc.renamed}
			err := checkServed(dirInput(s.d, inName), s.describe(t, inName), key)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			if tc.want == errNotServed {
				require.ErrorContains(t, err, "is not the FIFO the agent serves as in")
			}
		})
	}
}

// TestWriteRequestNotServed: with DIR/in and DIR/ask swapped (the status
// file names each as the other), a request waits servedPatience for the
// names to come right, then fails, and nothing was written into either
// FIFO.
func TestWriteRequestNotServed(t *testing.T) {
	s := newServedDir(t)
	checkLeaks(t)
	s.writeStatus(t, map[string]fifo.ID{inName: s.id[askName], askName: s.id[inName]}, 0o640, os.Geteuid())
	key := replyKey{agent: uint32(os.Geteuid()), othersRename: true, othersCreate: true}
	for _, name := range []string{inName, askName} {
		start := time.Now()
		err := writeRequest(context.Background(), dirInput(s.d, name), []byte("\n{\"id\":\"x\",\"reply\":\"secret\"}\n"), &replyFIFO{key: key})
		require.ErrorIs(t, err, errNotServed)
		require.GreaterOrEqual(t, time.Since(start), servedPatience)
	}
	s.requireUnread(t)
}

// TestWriteRequestServedLater: a request whose input FIFO the status
// file does not name yet (an agent that just followed a replaced FIFO)
// is written once the file names it.
func TestWriteRequestServedLater(t *testing.T) {
	s := newServedDir(t)
	checkLeaks(t)
	me := os.Geteuid()
	s.writeStatus(t, map[string]fifo.ID{inName: s.id[askName]}, 0o640, me)
	key := replyKey{agent: uint32(me), othersRename: true}
	done := make(chan error, 1)
	go func() {
		done <- writeRequest(context.Background(), dirInput(s.d, inName), []byte("\nline\n"), &replyFIFO{key: key})
	}()
	s.writeStatus(t, map[string]fifo.ID{inName: s.id[inName]}, 0o640, me)
	require.NoError(t, <-done)
	got := make([]byte, 6)
	n, err := s.readers[inName].Read(got)
	require.NoError(t, err)
	require.Equal(t, "\nline\n", string(got[:n]))
}

// TestWriteRequestNotServedCancelled: a request that waits for its input
// FIFO to be served ends with its context.
func TestWriteRequestNotServedCancelled(t *testing.T) {
	s := newServedDir(t)
	checkLeaks(t)
	s.writeStatus(t, map[string]fifo.ID{inName: s.id[askName]}, 0o640, os.Geteuid())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := writeRequest(ctx, dirInput(s.d, inName), []byte("\nline\n"), &replyFIFO{key: replyKey{agent: uint32(os.Geteuid())}})
	require.ErrorIs(t, err, context.Canceled)
	s.requireUnread(t)
}
