//go:build linux

package fifo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/sharedir"
)

// TestUnnamed: the text names no path, the chain is kept.
func TestUnnamed(t *testing.T) {
	require.NoError(t, Unnamed("op", nil))
	_, err := os.Open("/nonexistent/secret-name")
	err = Unnamed("open reply fifo", fmt.Errorf("reply %q: %w", "secret-name", err))
	require.Equal(t, "open reply fifo: no such file or directory", err.Error())
	require.ErrorIs(t, err, fs.ErrNotExist)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "write reply fifo: no reader", Unnamed("write reply fifo", errors.Join(fmt.Errorf("x: %w", ErrNoReader), errors.New("y"))).Error())
}

// TestOpenReplyUnnamed: no error of OpenReply or of a Reply names the FIFO.
func TestOpenReplyUnnamed(t *testing.T) {
	checkLeaks(t)
	shared, _, _ := sharedDir(t)
	d, err := sharedir.Open(shared, false)
	require.NoError(t, err)
	defer d.Close()
	const secret = "secret-name"
	require.NoError(t, os.WriteFile(filepath.Join(shared, secret+"file"), nil, 0o600))
	_, err = MakeAt(d, secret+"lonely", 0o600)
	require.NoError(t, err)
	for _, name := range []string{"missing", "file", "lonely"} {
		_, err := OpenReply(d, secret+name)
		require.Error(t, err)
		require.NotContains(t, err.Error(), secret, name)
	}
	_, err = MakeAt(d, secret, 0o600)
	require.NoError(t, err)
	r, err := OpenReaderNowAt(d, secret)
	require.NoError(t, err)
	defer r.Close()
	w, err := OpenReply(d, secret)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, os.Remove(filepath.Join(shared, secret)))
	_, err = w.Write([]byte("x"))
	require.ErrorIs(t, err, ErrReplaced)
	require.NotContains(t, err.Error(), secret)
}
