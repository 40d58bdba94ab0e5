package readwait

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// pythonPipes starts python3 -i -q on pipes and waits for its prompt
// (python writes it to stderr).
func pythonPipes(t testing.TB) (*child, *Probe) {
	c := startPipes(t, nil, python...)
	p := c.probe()
	c.expect(">>> ")
	return c, p
}

// python is python3 -i with SIGINT its KeyboardInterrupt also where the
// test started with SIGINT ignored (a background job of a script), which
// python would keep.
var python = []string{"python3", "-q", "-i", "-c", "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"}

// TestPythonPipes: python3 on pipes is seen blocked once it has written
// its prompt, and not while it runs, sleeps or waits on anything but its
// input; select, poll and epoll on its input count as reading it.
func TestPythonPipes(t *testing.T) {
	checked(t)
	c, p := pythonPipes(t)
	waitBlocked(t, p, c.pid(), true)
	waitAsleep(t, c.pid(), callRead)

	c.write("1+1\n")
	c.expect("2\n>>> ")
	waitBlocked(t, p, c.pid(), true)

	// Each case: what python runs, the line it prints first, the kind of
	// call it then waits in (running: none) and whether that is reading
	// its input; a wait that is not ends with ^C.
	const running = call(255)
	for _, tc := range []struct {
		name, code, line string
		in               call
		reading          bool
	}{
		{"busy", "print('spin'); exec('while True: pass')\n", "spin\n", running, false},
		{"sleep", "import time; print('sleep'); time.sleep(60)\n", "sleep\n", callOther, false},
		{"other pipe", "import os; r, w = os.pipe(); print('read'); os.read(r, 1)\n", "read\n", callRead, false},
		{"select other", "import select; print('select'); select.select([r], [], [])\n", "select\n", callSelect, false},
		{"select input", "print('select'); select.select([r, 0], [], [])\n", "select\n", callSelect, true},
		{"poll other", "q = select.poll(); q.register(r, select.POLLIN); print('poll'); q.poll()\n", "poll\n", callPoll, false},
		{"poll input", "q = select.poll(); q.register(r, select.POLLIN); q.register(0, select.POLLIN); print('poll'); q.poll()\n", "poll\n", callPoll, true},
		{"epoll other", "e = select.epoll(); e.register(r, select.EPOLLIN); print('epoll'); e.poll()\n", "epoll\n", callEpoll, false},
		{"epoll input", "e = select.epoll(); e.register(0, select.EPOLLIN); print('epoll'); e.poll()\n", "epoll\n", callEpoll, true},
	} {
		c.write(tc.code)
		c.expect(tc.line)
		if tc.in == running {
			waitRunning(t, c.pid())
		} else {
			waitAsleep(t, c.pid(), tc.in)
		}
		blocked, err := p.Blocked(c.pid())
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.reading, blocked, "%s: %s", tc.name, describe(c.pid()))
		if tc.reading {
			c.write("'woken'\n") // the wait ends; python reads this line next
			c.expect("'woken'\n>>> ")
		} else {
			c.interrupt()
			c.expect("KeyboardInterrupt\n>>> ")
		}
		waitBlocked(t, p, c.pid(), true)
	}
}

// TestCatPipe: cat reading a pipe is blocked reading it, and again after
// each line it copied.
func TestCatPipe(t *testing.T) {
	checked(t)
	c := startPipes(t, nil, "cat")
	p := c.probe()
	waitBlocked(t, p, c.pid(), true)
	c.write("hello\n")
	c.expect("hello\n")
	waitBlocked(t, p, c.pid(), true)
}

// TestShellsPipes: shells at their prompt on pipes are blocked reading
// them: dash and busybox sh in read, bash (readline) in pselect6.
func TestShellsPipes(t *testing.T) {
	checked(t)
	for _, sh := range []struct {
		argv []string
		in   call
	}{
		{[]string{"sh", "-i"}, callRead},
		{[]string{"bash", "--norc", "-i"}, callSelect},
		{[]string{"busybox", "sh", "-i"}, callRead},
	} {
		c := startPipes(t, []string{"PS1=ready$ ", "ENV="}, sh.argv...)
		p := c.probe()
		c.expect("ready$ ")
		waitAsleep(t, c.pid(), sh.in)
		waitBlocked(t, p, c.pid(), true)
		c.write("echo $((6*7))\n")
		c.expect("42\n")
		c.expect("ready$ ")
		waitBlocked(t, p, c.pid(), true)
	}
}

// TestOtherInput: a reader of another pipe than the one probed is not
// blocked reading the input, even where both are its stdin's kind.
func TestOtherInput(t *testing.T) {
	checked(t)
	c := startPipes(t, nil, "cat")
	other := startPipes(t, nil, "cat")
	p := other.probe()
	waitAsleep(t, c.pid(), callRead)
	blocked, err := p.Blocked(c.pid())
	require.NoError(t, err)
	require.False(t, blocked, "cat reads another pipe")
}

// TestGroups: a reader in the group, below its leader (a shell that
// waits for it), is seen; a reader in a group of its own is not seen as
// the shell's group, only as its own.
func TestGroups(t *testing.T) {
	checked(t)
	need(t, "setsid")
	t.Run("same group", func(t *testing.T) {
		c := startPipes(t, nil, "sh", "-c", "python3 -i -q; echo done")
		p := c.probe()
		c.expect(">>> ")
		waitBlocked(t, p, c.pid(), true)
	})
	t.Run("own group", func(t *testing.T) {
		c := startPipes(t, nil, "sh", "-c", "setsid python3 -i -q; echo done")
		p := c.probe()
		c.expect(">>> ")
		kids := children(t, c.pid())
		require.Len(t, kids, 1)
		waitBlocked(t, p, kids[0], true)
		blocked, err := p.Blocked(c.pid())
		require.NoError(t, err)
		require.False(t, blocked, "the reader is in another group: %s", describe(kids[0]))
	})
}

// TestExited: a group whose leader has exited (and was reaped) is not
// blocked, and that is no error.
func TestExited(t *testing.T) {
	checked(t)
	c := startPipes(t, nil, "cat")
	p := c.probe()
	pid := c.pid()
	require.NoError(t, c.in.Close())
	require.NoError(t, c.cmd.Wait())
	blocked, err := p.Blocked(pid)
	require.NoError(t, err)
	require.False(t, blocked)
	blocked, err = p.Blocked(0)
	require.NoError(t, err)
	require.False(t, blocked, "no group")
}

// TestZombie: a leader that has exited and is not reaped yet is not
// blocked, and that is no error (/proc shows it, as a zombie).
func TestZombie(t *testing.T) {
	checked(t)
	c := startPipes(t, nil, "cat")
	p := c.probe()
	require.NoError(t, c.in.Close())
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.pid(), &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			require.NoError(t, err)
			break
		}
	}
	blocked, err := p.Blocked(c.pid())
	require.NoError(t, err)
	require.False(t, blocked)
}

// TestThreadedReader: a reader in a process of more than one thread is
// not blocked reading its input, whichever thread reads (its other
// threads may still write), and that is no error; once it is back to one
// thread, reading on it, it is.
func TestThreadedReader(t *testing.T) {
	checked(t)
	c := startPipes(t, nil, "python3", "-c", `
import os, sys, threading
def read(): os.read(0, 100)
t = threading.Thread(target=read); t.start()
print("thread reads", flush=True); t.join()
print("main reads, a thread waits", flush=True)
stop = threading.Event(); w = threading.Thread(target=stop.wait); w.start()
os.read(0, 100); stop.set(); w.join()
print("main reads alone", flush=True); os.read(0, 100)
`)
	p := c.probe()
	for _, step := range []struct {
		line    string
		blocked bool
	}{
		{"thread reads\n", false},
		{"main reads, a thread waits\n", false},
		{"main reads alone\n", true},
	} {
		c.expect(step.line)
		waitThreadReads(t, c.pid())
		if step.blocked {
			// Python's join returns before the joined thread is gone
			// from the kernel's view: wait until the process is one
			// thread again, as the step says it is.
			waitThreads(t, p, c.pid(), 1)
		}
		// The count from the task directory's links is the text's.
		require.Equal(t, p.statField(c.pid(), statThreads), p.threads(c.pid()), step.line)
		blocked, err := p.Blocked(c.pid())
		require.NoError(t, err, step.line)
		require.Equal(t, step.blocked, blocked, "%s: %s", step.line, describe(c.pid()))
		c.write("x\n")
	}
}

// waitThreadReads waits until a thread of process pid is asleep in a
// read of its descriptor 0, within bound.
func waitThreadReads(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		require.NoError(t, err)
		for _, e := range tasks {
			tid, _ := strconv.Atoi(e.Name())
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + e.Name() + "/syscall")
			nr, args, ok := parseSyscall(b)
			if err == nil && ok && args[0] == 0 && sleeping(tid) && kindOf(t, pid, nr) == callRead {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no thread of process %d waits in a read of its input: %s", pid, describe(pid))
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// waitThreads waits until process pid has n threads, within bound.
func waitThreads(t testing.TB, p *Probe, pid, n int) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for p.threads(pid) != n {
		if time.Now().After(deadline) {
			t.Fatalf("process %d has %d threads after %v, want %d: %s", pid, p.threads(pid), bound, n, describe(pid))
		}
		time.Sleep(50 * time.Microsecond)
	}
}
