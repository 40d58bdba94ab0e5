package child

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"time"
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
// What it changes for the whole process, for a while: when the thread's
// ids change, the kernel makes the process not dumpable (PR_SET_DUMPABLE
// 0, as after a setuid program's start), which keeps the child's user
// from tracing the thread, or opening its /proc/PID/task/TID/mem, while
// it has that user's ids. Once that thread is gone no thread has them,
// and asUser makes the process dumpable again if it was before: a
// process not dumpable keeps root without CAP_SYS_PTRACE (docker exec,
// kubectl debug) out of /proc/1/fd, /proc/1/root and the like, and
// dumps no core. When the thread cannot be seen gone (see threadGone),
// the process stays not dumpable, which is safe. asUser returns once its
// thread is gone, and calls run one at a time, so that no thread of
// another has a child's ids when the process is made dumpable.
func asUser(cred *syscall.Credential, f func()) error {
	asUserMu.Lock()
	defer asUserMu.Unlock()
	wasDumpable, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	type result struct {
		tid int
		err error
	}
	done := make(chan result, 1)
	go onOtherThread(func() {
		tid := unix.Gettid()
		if err := setThreadCredential(cred); err != nil {
			done <- result{tid, err} // the thread ends all the same
			return
		}
		f()
		done <- result{tid, nil}
	})
	res := <-done
	// The thread outlives no call; a failure to see it gone leaves the
	// process as the kernel made it: not dumpable.
	if threadGone(res.tid, threadGoneWithin) && wasDumpable == 1 {
		unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	}
	return res.err
}

// asUserMu is held for the whole of an asUser call, the thread's end
// included.
var asUserMu sync.Mutex

// threadGoneWithin bounds how long asUser waits for its thread to end:
// the runtime ends it as soon as its goroutine returns, in microseconds.
const threadGoneWithin = time.Second

// threadGone waits until the thread tid of this process has ended and
// been released by the kernel, when nothing of it (its ids, its /proc
// entry) is left, and reports whether it saw that within limit. The
// kernel has no way to wait for a thread of one's own process (and
// pidfd_open's PIDFD_THREAD is Linux 6.9's), so it looks, at growing
// intervals.
func threadGone(tid int, limit time.Duration) bool {
	pid := unix.Getpid()
	deadline := time.Now().Add(limit)
	for pause := 10 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		if unix.Tgkill(pid, tid, 0) == unix.ESRCH {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
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
