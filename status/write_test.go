//go:build linux

package status

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/sharedir"
)

// WriteAt puts the file in place of whatever name is: none (made), the
// file before (replaced, its old content gone), a symbolic link (the
// link replaced, its target untouched); a directory there is refused and
// left as it was. Nothing else is left in the directory.
func TestWriteAtReplaces(t *testing.T) {
	dir := t.TempDir()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	path := filepath.Join(dir, "status.json")
	read := func() Status {
		t.Helper()
		s, err := Read(path)
		require.NoError(t, err)
		return s
	}
	entries := func() []string {
		t.Helper()
		es, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}

	require.NoError(t, WriteAt(d, "status.json", Status{PID: 1}, 0o640))
	require.Equal(t, 1, read().PID, "made")
	held, err := os.Open(path)
	require.NoError(t, err)
	defer held.Close()
	require.NoError(t, WriteAt(d, "status.json", Status{PID: 2}, 0o640))
	require.Equal(t, 2, read().PID, "replaced")
	var old Status
	require.NoError(t, decodeFile(held, &old))
	require.Equal(t, 1, old.PID, "a reader of the file before reads it whole")
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
	require.Equal(t, []string{"status.json"}, entries())

	target := filepath.Join(t.TempDir(), "target")
	require.NoError(t, os.WriteFile(target, []byte("mine"), 0o600))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(target, path))
	require.NoError(t, WriteAt(d, "status.json", Status{PID: 3}, 0o640))
	require.Equal(t, 3, read().PID)
	st, err = os.Lstat(path)
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular(), "the link is replaced")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "mine", string(b), "its target is untouched")

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(path, "inside"), nil, 0o600))
	require.Error(t, WriteAt(d, "status.json", Status{PID: 4}, 0o640))
	st, err = os.Lstat(path)
	require.NoError(t, err)
	require.True(t, st.IsDir(), "the directory is left where it was")
	_, err = os.Stat(filepath.Join(path, "inside"))
	require.NoError(t, err)
	require.Equal(t, []string{"status.json"}, entries(), "no temporary file left")
}

// decodeFile decodes the status file f, read from its start.
func decodeFile(f *os.File, s *Status) error {
	b, err := readAll(f, 0)
	if err != nil {
		return err
	}
	*s, err = decode(b)
	return err
}
