//go:build linux

package tty

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/stretchr/testify/require"
)

// TestForeground: a terminal no session holds has no foreground group;
// once a child holds it, the master answers with the child's group.
func TestForeground(t *testing.T) {
	leakcheck.Check(t)
	master, slave, err := OpenPTY(Winsize{Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer master.Close()
	pg, err := Foreground(master)
	require.NoError(t, err)
	require.Zero(t, pg, "no session holds the terminal yet")

	c := exec.Command("cat")
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, c.Start())
	slave.Close()
	pg, err = Foreground(master)
	require.NoError(t, err)
	require.Equal(t, c.Process.Pid, pg, "the child leads its session and its group")
	require.NoError(t, c.Process.Kill())
	require.Error(t, c.Wait())
}
