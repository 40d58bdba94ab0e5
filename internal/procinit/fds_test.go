//go:build linux

package procinit

import (
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloseInheritedOnExec: a descriptor inherited without close-on-exec,
// as from a careless parent, has it afterwards.
func TestCloseInheritedOnExec(t *testing.T) {
	fd, err := syscall.Dup(0) // dup clears FD_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := closeInheritedOnExec(); err != nil {
		t.Fatal(err)
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("fd %d is not close-on-exec", fd)
	}
}
