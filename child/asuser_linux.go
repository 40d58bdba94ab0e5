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
// one (runtime.LockOSThread). The thread is never the main one, whose ids
// /proc/PID shows for the whole agent and which the runtime never ends.
// asUser fails, without running f, when the agent may not take cred's
// ids: then a child could not either.
//
// What it leaves behind: when the effective uid changes, the kernel makes
// the whole process not dumpable (PR_SET_DUMPABLE 0, as after a setuid
// program's start), which keeps the child's user from tracing the thread
// while it has that user's ids. asUser leaves it so: the agent's /proc
// files stay root's, and no process of the child's user may trace it.
func asUser(cred *syscall.Credential, f func()) error {
	done := make(chan error, 1)
	go onOtherThread(func() {
		if err := setThreadCredential(cred); err != nil {
			done <- err
			return
		}
		f()
		done <- nil
	})
	return <-done
}

// onOtherThread runs f on a goroutine locked, for good, to an OS thread
// other than the main one: the thread ends with it.
func onOtherThread(f func()) {
	runtime.LockOSThread() // never unlocked here unless this is the main thread
	if unix.Gettid() != unix.Getpid() {
		f()
		return
	}
	// The main thread: while this goroutine holds it, the one started
	// here runs on another thread.
	defer runtime.UnlockOSThread()
	ran := make(chan struct{})
	go func() {
		defer close(ran) // runs before the goroutine ends, still locked
		onOtherThread(f)
	}()
	<-ran
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
