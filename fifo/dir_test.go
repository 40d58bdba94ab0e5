//go:build linux

package fifo

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// sharedDir returns a new directory that every user can write, like a
// shared FIFO directory, with a root-owned 0600 file "secret" and a FIFO
// "fifo" next to it (outside) that links planted in it may point to.
func sharedDir(t *testing.T) (dir, secret, outFIFO string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(dir, 0o777))
	require.NoError(t, os.Chmod(dir, 0o777))
	secret = filepath.Join(base, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	outFIFO = filepath.Join(base, "fifo")
	require.NoError(t, unix.Mkfifo(outFIFO, 0o600))
	return dir, secret, outFIFO
}

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	return fi.Mode()
}

// TestDirRefusesLinks: every operation of a Dir on a name that is a
// symbolic link (to a FIFO, to a file, to a directory outside) refuses it
// and changes nothing outside.
func TestDirRefusesLinks(t *testing.T) {
	checkLeaks(t)
	shared, secret, outFIFO := sharedDir(t)
	d, err := sharedir.Open(shared, false)
	require.NoError(t, err)
	defer d.Close()
	outDir := filepath.Dir(secret)
	require.NoError(t, os.Symlink(outFIFO, filepath.Join(shared, "tofifo")))
	require.NoError(t, os.Symlink(secret, filepath.Join(shared, "tofile")))
	require.NoError(t, os.Symlink(outDir, filepath.Join(shared, "todir")))
	before := []os.FileMode{modeOf(t, secret), modeOf(t, outFIFO), modeOf(t, outDir)}

	fifoOps := map[string]func(name string) error{
		"CheckAt":       func(n string) error { return CheckAt(d, n) },
		"Make":          func(n string) error { _, err := MakeAt(d, n, 0o666); return err },
		"RemoveAt":      func(n string) error { return RemoveAt(d, n) },
		"OpenReaderNow": func(n string) error { return closeIf(OpenReaderNowAt(d, n)) },
		"OpenWriterNow": func(n string) error { return closeIf(OpenWriterNowAt(d, n)) },
		"OpenSourceAt": func(n string) error {
			s, err := OpenSourceAt(d, n)
			if err == nil {
				s.Close()
			}
			return err
		},
		"OpenSinkAt": func(n string) error {
			s, err := OpenSinkAt(d, n)
			if err == nil {
				s.Close()
			}
			return err
		},
		"OpenReply": func(n string) error {
			r, err := OpenReply(d, n)
			if err == nil {
				r.Close()
			}
			return err
		},
	}
	for op, f := range fifoOps {
		for _, n := range []string{"tofifo", "tofile", "todir"} {
			err := f(n)
			require.Error(t, err, "%s(%s)", op, n)
			require.True(t, errors.Is(err, ErrNotFIFO) || errors.Is(err, sharedir.ErrSymlink), "%s(%s): %v", op, n, err)
		}
	}
	for _, n := range []string{"tofifo", "tofile", "todir"} {
		_, err := d.OpenFile(n, unix.O_RDWR|unix.O_CREAT, 0o666)
		require.Error(t, err, "OpenFile(%s)", n)
		_, err = d.OpenSub(n)
		require.ErrorIs(t, err, sharedir.ErrSymlink, "OpenSub(%s)", n)
		_, err = d.MakeSub(n, 0o1733)
		require.ErrorIs(t, err, sharedir.ErrSymlink, "MakeSub(%s)", n)
		st, err := d.Stat(n)
		require.NoError(t, err)
		require.Equal(t, uint32(unix.S_IFLNK), st.Mode&unix.S_IFMT, "Stat does not follow")
	}
	require.Equal(t, before, []os.FileMode{modeOf(t, secret), modeOf(t, outFIFO), modeOf(t, outDir)})
	b, err := os.ReadFile(secret)
	require.NoError(t, err)
	require.Equal(t, "secret", string(b))

	for _, bad := range []string{"", ".", "..", "a/b", "../x"} {
		_, err := MakeAt(d, bad, 0o600)
		require.ErrorIs(t, err, sharedir.ErrBadName, bad)
		_, err = d.Stat(bad)
		require.ErrorIs(t, err, sharedir.ErrBadName, bad)
		require.ErrorIs(t, d.Remove(bad), sharedir.ErrBadName, bad)
	}
}

func closeIf(f *os.File, err error) error {
	if f != nil {
		f.Close()
	}
	return err
}

// TestPathFunctionsRefuseLinks: the functions taking a path refuse a link
// at each of its last components when the directory holding the link is
// shared.
func TestPathFunctionsRefuseLinks(t *testing.T) {
	checkLeaks(t)
	shared, secret, outFIFO := sharedDir(t)
	outDir := filepath.Dir(secret)
	require.NoError(t, os.Symlink(outDir, filepath.Join(shared, "dirlink")))
	require.NoError(t, os.Symlink(outFIFO, filepath.Join(shared, "fifolink")))
	paths := []string{filepath.Join(shared, "dirlink", "fifo"), filepath.Join(shared, "fifolink")}
	for _, p := range paths {
		require.Error(t, Check(p), p)
		_, err := Make(p, 0o666)
		require.Error(t, err, p)
		require.Error(t, closeIf(OpenWriterNow(p)), p)
		require.Error(t, closeIf(OpenReaderNow(p)), p)
		_, err = OpenSource(p)
		require.Error(t, err, p)
		_, err = OpenSink(p)
		require.Error(t, err, p)
	}
	require.Equal(t, os.ModeNamedPipe|0o600, modeOf(t, outFIFO))
}

// TestMakeRace: while Make makes a FIFO, another user renames a link to a
// file outside over it; the file's mode never changes.
func TestMakeRace(t *testing.T) {
	checkLeaks(t)
	shared, secret, _ := sharedDir(t)
	d, err := sharedir.Open(shared, false)
	require.NoError(t, err)
	defer d.Close()
	name, link := filepath.Join(shared, "in"), filepath.Join(shared, "link")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Symlink(secret, link)
			os.Rename(link, name)
		}
	}()
	for i := 0; i < 2000; i++ {
		os.Remove(name)
		MakeAt(d, "in", 0o666)
	}
	close(stop)
	wg.Wait()
	require.Equal(t, os.FileMode(0o600), modeOf(t, secret))
}

func TestOpenReply(t *testing.T) {
	checkLeaks(t)
	shared, _, _ := sharedDir(t)
	d, err := sharedir.Open(shared, false)
	require.NoError(t, err)
	defer d.Close()
	mk := func(name string) *os.File {
		t.Helper()
		_, err := MakeAt(d, name, 0o600)
		require.NoError(t, err)
		r, err := OpenReaderNowAt(d, name)
		require.NoError(t, err)
		return r
	}

	t.Run("no reader", func(t *testing.T) {
		_, err := MakeAt(d, "lonely", 0o600)
		require.NoError(t, err)
		_, err = OpenReply(d, "lonely")
		require.ErrorIs(t, err, ErrNoReader)
	})
	t.Run("hard link refused", func(t *testing.T) {
		r := mk("two")
		defer r.Close()
		require.NoError(t, os.Link(filepath.Join(shared, "two"), filepath.Join(shared, "two-b")))
		_, err := OpenReply(d, "two")
		require.ErrorIs(t, err, ErrNotFIFO)
	})
	t.Run("not a fifo", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(shared, "file"), nil, 0o600))
		_, err := OpenReply(d, "file")
		require.ErrorIs(t, err, ErrNotFIFO)
	})
	changes := map[string]func(t *testing.T, name string){
		"replaced": func(t *testing.T, name string) {
			p := filepath.Join(shared, name)
			require.NoError(t, unix.Mkfifo(p+".new", 0o600))
			require.NoError(t, os.Rename(p+".new", p))
		},
		"moved": func(t *testing.T, name string) {
			require.NoError(t, os.Rename(filepath.Join(shared, name), filepath.Join(shared, name+".moved")))
		},
		"removed": func(t *testing.T, name string) { require.NoError(t, os.Remove(filepath.Join(shared, name))) },
		"linked": func(t *testing.T, name string) {
			require.NoError(t, os.Link(filepath.Join(shared, name), filepath.Join(shared, name+".link")))
		},
		"link": func(t *testing.T, name string) {
			p := filepath.Join(shared, name)
			require.NoError(t, os.Symlink(p+".x", p+".l"))
			require.NoError(t, os.Rename(p+".l", p))
		},
	}
	for what, change := range changes {
		t.Run(what, func(t *testing.T) {
			name := "r-" + what
			r := mk(name)
			defer r.Close()
			w, err := OpenReply(d, name)
			require.NoError(t, err)
			defer w.Close()
			require.Equal(t, name, w.Name())
			require.NoError(t, w.Check())
			n, err := w.Write([]byte("one\n"))
			require.NoError(t, err)
			require.Equal(t, 4, n)
			change(t, name)
			require.ErrorIs(t, w.Check(), ErrReplaced)
			n, err = w.Write([]byte("two\n"))
			require.ErrorIs(t, err, ErrReplaced)
			require.Zero(t, n)
			require.Equal(t, "one\n", string(Drain(r)), "nothing written after the change")
		})
	}
}
