package child

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// asUser runs f on an OS thread of its own that has cred's uid, gid and
// supplementary groups (real, effective, saved and file system ids), as a
// child started with cred has them, so that what f asks the kernel
// (access(2), stat(2)) is answered for that child: search permission on
// every directory of a path, modes, ACLs, noexec mounts. Only mode bits
// read by the agent would miss all but the second.
//
// The credentials are the thread's alone: they are set with the raw
// system calls, not Go's (which apply them to every thread), and the
// thread is never given back to the runtime: f's goroutine ends locked to
// it, and the runtime then ends the thread. While it runs, the runtime
// makes any new thread from its template thread, never by cloning this
// one (runtime.LockOSThread). asUser fails, without running f, when the
// agent may not take cred's ids: then a child could not either.
func asUser(cred *syscall.Credential, f func()) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := setThreadCredential(cred); err != nil {
			done <- err
			return
		}
		f()
		done <- nil
	}()
	return <-done
}

// setThreadCredential gives the calling thread cred's supplementary groups
// (unless NoSetGroups), gid and uid, in the order a child's start does.
func setThreadCredential(cred *syscall.Credential) error {
	if !cred.NoSetGroups {
		var groups unsafe.Pointer
		if len(cred.Groups) > 0 {
			groups = unsafe.Pointer(&cred.Groups[0])
		}
		if _, _, e := unix.RawSyscall(sysSetgroups, uintptr(len(cred.Groups)), uintptr(groups), 0); e != 0 {
			return fmt.Errorf("take the groups %v of the child's user: setgroups: %w", cred.Groups, e)
		}
	}
	gid, uid := uintptr(cred.Gid), uintptr(cred.Uid)
	if _, _, e := unix.RawSyscall(sysSetresgid, gid, gid, gid); e != 0 {
		return fmt.Errorf("take the child's gid %d: setresgid: %w", cred.Gid, e)
	}
	if _, _, e := unix.RawSyscall(sysSetresuid, uid, uid, uid); e != 0 {
		return fmt.Errorf("take the child's uid %d: setresuid: %w", cred.Uid, e)
	}
	return nil
}
