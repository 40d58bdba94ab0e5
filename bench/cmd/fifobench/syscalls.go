//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// errNoAttach is strace failing to attach, e.g. without CAP_SYS_PTRACE.
var errNoAttach = errors.New("strace could not attach")

// syscallCount is what strace -c saw a contender do per round trip.
type syscallCount struct {
	name   string
	perRT  float64
	byCall []callCount // most frequent first
}

type callCount struct {
	call  string
	perRT float64
}

// syscalls counts, with strace -c -f -p attached to each bridge, the
// system calls of b.straceN round trips with a kept writer, unpinned.
func syscalls(b *bench, r *results) error {
	if b.straceN <= 0 {
		return nil
	}
	if b.tools["strace"] == "" {
		r.note("system calls per round trip: skipped (strace not installed)")
		return nil
	}
	for _, name := range b.have([]string{direct, floor, socat, bridge, floorTTY, bridgeTTY}, r) {
		c, err := b.straceOnce(name)
		if errors.Is(err, errNoAttach) {
			r.note("system calls per round trip: skipped (%v)", err)
			return nil
		}
		if err != nil {
			return err
		}
		r.syscalls = append(r.syscalls, c)
	}
	return nil
}

func (b *bench) straceOnce(name string) (syscallCount, error) {
	rn, err := b.start(name, unpinned)
	if err != nil {
		return syscallCount{}, err
	}
	c, err := b.straceRun(rn)
	if serr := rn.stop(); err == nil {
		err = serr
	}
	return c, err
}

// straceRun warms rn up, attaches strace, runs the round trips and reads
// strace's summary.
func (b *bench) straceRun(rn *running) (syscallCount, error) {
	c := syscallCount{name: rn.name}
	if _, err := b.ping(rn, unpinned, 0, warmUp, false); err != nil {
		return c, err
	}
	summary := filepath.Join(filepath.Dir(rn.in), "strace.txt")
	st := exec.Command(b.tools["strace"], "-c", "-f", "-o", summary, "-p", strconv.Itoa(rn.pid()))
	stderr, err := st.StderrPipe()
	if err != nil {
		return c, err
	}
	if err := st.Start(); err != nil {
		return c, fmt.Errorf("start strace: %w", err)
	}
	attached, done := make(chan bool, 1), make(chan string, 1)
	go func() { // strace says when it is attached; keep the rest for errors
		var rest strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "attached") {
				select {
				case attached <- true:
				default:
				}
			}
			rest.WriteString(sc.Text() + "\n")
		}
		close(attached)
		done <- rest.String()
	}()
	ok := <-attached
	var us []float64
	if ok {
		us, err = b.ping(rn, unpinned, b.straceN, 0, false)
	}
	st.Process.Signal(unix.SIGINT)
	msg := <-done
	werr := waitOrKill(st, stopPatience)
	if exit, ok := werr.(*exec.ExitError); ok && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGINT {
		werr = nil // strace prints its summary, then dies of the signal
	}
	switch {
	case err != nil:
		return c, err
	case !ok:
		return c, fmt.Errorf("%w to %s: %s", errNoAttach, rn.name, strings.TrimSpace(msg))
	case werr != nil:
		return c, fmt.Errorf("strace -p %d (%s): %v: %s", rn.pid(), rn.name, werr, strings.TrimSpace(msg))
	}
	return parseStrace(summary, rn.name, len(us))
}

// parseStrace reads strace -c's table: "% time seconds usecs/call calls
// errors syscall", the last line "total".
func parseStrace(path, name string, rts int) (syscallCount, error) {
	c := syscallCount{name: name}
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || strings.HasPrefix(f[0], "%") || strings.HasPrefix(f[0], "-") {
			continue
		}
		calls, err := strconv.Atoi(f[3])
		if err != nil {
			continue
		}
		per := float64(calls) / float64(max(rts, 1))
		if call := f[len(f)-1]; call == "total" {
			c.perRT = per
		} else {
			c.byCall = append(c.byCall, callCount{call, per})
		}
	}
	sort.SliceStable(c.byCall, func(i, j int) bool { return c.byCall[i].perRT > c.byCall[j].perRT })
	if c.perRT == 0 {
		return c, fmt.Errorf("strace summary of %s has no total:\n%s", name, b)
	}
	return c, nil
}
