//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// stopPatience is how long a stopped process may take before SIGKILL.
const stopPatience = 5 * time.Second

// waitOrKill waits for cmd, killing it after patience.
func waitOrKill(cmd *exec.Cmd, patience time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(patience):
		cmd.Process.Kill()
		return <-done
	}
}

// tree is the processes a process had started, as pidfds, so that waiting
// for them is safe from pid reuse.
type tree []int

// openTree opens a pidfd for every descendant of pid.
func openTree(pid int) tree {
	var t tree
	for _, child := range children(pid) {
		if fd, err := unix.PidfdOpen(child, 0); err == nil {
			t = append(t, fd)
		}
		t = append(t, openTree(child)...)
	}
	return t
}

// children lists pid's children, from every thread's list.
func children(pid int) []int {
	var pids []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// waitGone waits until every process of t has exited (a pidfd polls
// readable then), sends SIGKILL to those left after patience and waits
// for them too, and closes the pidfds. Called once the process whose tree
// it is has been waited for: a process it left behind has been given to
// the harness then (a child subreaper, see setup), and is reaped here.
func (t tree) waitGone(patience time.Duration) {
	deadline := time.Now().Add(patience)
	for _, fd := range t {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			left := max(time.Until(deadline), 0)
			n, err := unix.Poll(p, int(left.Milliseconds()))
			if err == unix.EINTR {
				continue
			}
			if n == 0 && err == nil {
				unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
				deadline = time.Now().Add(patience)
				continue
			}
			break
		}
		// ECHILD when it is not the harness's: its parent reaps it.
		unix.Waitid(unix.P_PIDFD, fd, nil, unix.WEXITED|unix.WNOHANG, nil)
		unix.Close(fd)
	}
}

// lastExit waits until every process of t has exited (each pidfd polls
// readable), without reaping any, and returns when the last was seen
// to; after patience it returns an error, the processes left running.
func (t tree) lastExit(patience time.Duration) (time.Time, error) {
	at, err := lastExits(patience, t)
	return at[0], err
}

// lastExits is lastExit of each of groups, all watched at once: when the
// last process of each was seen to exit.
func lastExits(patience time.Duration, groups ...tree) ([]time.Time, error) {
	at := make([]time.Time, len(groups))
	var p []unix.PollFd
	var group []int // the group of each of p
	for g, t := range groups {
		for _, fd := range t {
			p = append(p, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
			group = append(group, g)
		}
	}
	deadline := time.Now().Add(patience)
	for len(p) > 0 {
		n, err := unix.Poll(p, int(max(time.Until(deadline), 0).Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return at, fmt.Errorf("poll pidfds: %w", err)
		}
		if n == 0 {
			return at, fmt.Errorf("%d processes still running after %v", len(p), patience)
		}
		now := time.Now()
		left, leftGroup := p[:0], group[:0]
		for i, q := range p {
			if q.Revents == 0 {
				left, leftGroup = append(left, unix.PollFd{Fd: q.Fd, Events: unix.POLLIN}), append(leftGroup, group[i])
			} else {
				at[group[i]] = now
			}
		}
		p, group = left, leftGroup
	}
	for g := range at {
		if at[g].IsZero() {
			at[g] = time.Now() // a group of none
		}
	}
	return at, nil
}

// cpuTime is the CPU time pid's threads have used, from their schedstat
// (nanoseconds; /proc/PID/stat counts only in clock ticks of 10 ms).
func cpuTime(pid int) time.Duration {
	var sum int64
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		if fields := strings.Fields(string(b)); len(fields) > 0 {
			n, _ := strconv.ParseInt(fields[0], 10, 64)
			sum += n
		}
	}
	return time.Duration(sum)
}

// rssKiB is pid's resident set size in KiB.
func rssKiB(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}
