//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

const (
	sessP50Metric = "open, first prompt, one ask, close of a shell on a terminal, p50 (ms)"
	sessP99Metric = "open, first prompt, one ask, close of a shell on a terminal, p99 (ms)"
	sessFloor     = "sh on a terminal, driven directly" // the floor: the harness's own pseudo-terminal
	sessBridge    = "fifobridge open, ask -session, close"
	sessInDocker  = "the same, agent in a container"
	sessExec      = "docker exec -it"
	sessName      = "bench"
	sessCommand   = "echo x"
	sessAnswer    = "x\n"
	sessPrompt    = "$ "
	sessRegex     = `^\$ $`
)

// sessContenders are the ways of opening a shell, asking it one thing
// and ending it, floor first; the last two need Docker.
var sessContenders = []string{sessFloor, sessBridge, sessInDocker, sessExec}

// sessShell is the shell every contender runs, on a terminal, with the
// prompt sessPrompt (PS1 in its environment): the host's sh, which the
// image has too (imageShell). Not busybox's: its line editing asks the
// terminal where its cursor is at every prompt, and waits 20 ms after
// each line for an answer that neither the harness nor the agent gives.
func (b *bench) sessShell() []string { return []string{b.tools["sh"], "-i"} }

// The arguments of the sessions agent after -dir and -log-level: every
// session a shell on a terminal, asked at its prompt.
func sessArgs(b *bench) []string {
	return append([]string{"-mode", "sessions", "-tty", "-prompt", sessRegex, "--", b.tools["env"], "PS1=" + sessPrompt}, b.sessShell()...)
}

// sessionsPart times b.sessionCycles cycles of each contender: open a
// shell on a terminal, wait for its first prompt, ask it `echo x` and
// read the answer up to the next prompt, end it. fifobridge's cycle is
// `fifobridge open`, `fifobridge ask -session` and `fifobridge close`
// run one after the other to a sessions agent on the host and, with
// Docker, to one in a running container through a bind-mounted
// directory; docker exec's is `docker exec -it` of the same shell in
// that container, on a terminal the harness holds; the floor is the
// shell started on such a terminal directly. Each round adds every
// contender's p50 and p99 over its cycles.
func sessionsPart(b *bench, round int, r *results) error {
	names := []string{sessFloor, sessBridge}
	why, err := b.dockerReady()
	if err != nil {
		return err
	}
	var ctr *sessContainer
	if why != "" {
		r.note("sessions: %s and %s skipped (%s)", sessInDocker, sessExec, why)
	} else {
		if ctr, err = b.startSessionsContainer(); err != nil {
			return err
		}
		defer ctr.remove()
		names = append(names, sessInDocker, sessExec)
	}
	for _, name := range rotate(names, round) {
		ms, err := b.sessionRuns(name, ctr)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		r.add(sessP50Metric, name, percentile(ms, 50))
		r.add(sessP99Metric, name, percentile(ms, 99))
	}
	return nil
}

// sessionRuns runs contender name's cycle once uncounted, then
// b.sessionCycles times, each answer checked, and returns each cycle's
// time in ms.
func (b *bench) sessionRuns(name string, ctr *sessContainer) ([]float64, error) {
	c, err := b.newCycler(name, ctr)
	if err != nil {
		return nil, err
	}
	return runCycles(c, b.sessionCycles)
}

// runCycles asks c once uncounted, then n times, each answer checked,
// closes c, and returns each ask's time in ms.
func runCycles(c *asker, n int) (ms []float64, err error) {
	defer func() {
		if cerr := c.close(); err == nil {
			err = cerr
		}
	}()
	ms = make([]float64, 0, n)
	for i := -1; i < n; i++ {
		got, took, err := c.ask()
		if err != nil {
			return nil, err
		}
		if got != c.want {
			return nil, fmt.Errorf("answer %q, want %q", got, c.want)
		}
		if i >= 0 {
			ms = append(ms, float64(took.Microseconds())/1e3)
		}
	}
	return ms, nil
}

// newCycler readies contender name: its ask is one whole cycle.
func (b *bench) newCycler(name string, ctr *sessContainer) (*asker, error) {
	none := func() error { return nil }
	env := []string{"PS1=" + sessPrompt, "TERM=dumb"}
	switch name {
	case sessFloor:
		cycle := func() (string, error) { return ptyCycle(b.sessShell(), env, sessCommand, sessAnswer) }
		return &asker{ask: harnessTimed(cycle), want: sessAnswer, close: none}, nil
	case sessExec:
		argv := []string{b.tools["docker"], "exec", "-it", "-e", "PS1=" + sessPrompt, "-e", "TERM=dumb", ctr.name, imageShell, "-i"}
		cycle := func() (string, error) { return ptyCycle(argv, nil, sessCommand, sessAnswer) }
		return &asker{ask: harnessTimed(cycle), want: sessAnswer, close: none}, nil
	case sessInDocker:
		if err := b.awaitSessions(ctr.dir); err != nil {
			return nil, err
		}
		return &asker{ask: harnessTimed(b.cliCycle(ctr.dir, sessCommand)), want: sessAnswer, close: none}, nil
	}
	rn, err := b.start(sessBridge, unpinned)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(rn.in)
	if err := b.awaitSessions(dir); err != nil {
		rn.stop()
		return nil, err
	}
	return &asker{ask: harnessTimed(b.cliCycle(dir, sessCommand)), want: sessAnswer, close: rn.stop}, nil
}

// awaitSessions waits until a sessions agent serves dir (health -wait:
// open -wait would not do for the agent on the host, since the harness
// holds its DIR/in open), then opens and closes one session.
func (b *bench) awaitSessions(dir string) error {
	wait := strconv.Itoa(int(dockerTimeout/time.Second)) + "s"
	if _, err := output([]string{b.bin, "health", "-dir", dir, "-wait", wait}); err != nil {
		return err
	}
	if _, err := output([]string{b.bin, "open", "-dir", dir, sessName}); err != nil {
		return err
	}
	_, err := output([]string{b.bin, "close", "-dir", dir, sessName})
	return err
}

// cliCycle is fifobridge's cycle on the sessions agent of dir, as a
// script runs it: open (which returns at the first prompt), ask command,
// close.
func (b *bench) cliCycle(dir, command string) func() (string, error) {
	return func() (string, error) {
		if _, err := output([]string{b.bin, "open", "-dir", dir, sessName}); err != nil {
			return "", err
		}
		got, err := output([]string{b.bin, "ask", "-dir", dir, "-session", sessName, command})
		if _, cerr := output([]string{b.bin, "close", "-dir", dir, sessName}); err == nil {
			err = cerr
		}
		return got, err
	}
}

// sessContainer is the sessions part's container: a sessions agent as its
// PID 1 on a bind-mounted directory, and the target of docker exec.
type sessContainer struct {
	name string
	dir  string // the host's side of the bind mount
}

// startSessionsContainer starts the sessions part's container, from the
// Docker part's image: its agent runs the host's sh per session.
func (b *bench) startSessionsContainer() (*sessContainer, error) {
	dir, err := os.MkdirTemp(b.work, "sessions-dir-")
	if err != nil {
		return nil, err
	}
	b.containers++
	c := &sessContainer{name: fmt.Sprintf("fifobench-%d-%d", os.Getpid(), b.containers), dir: dir}
	args := b.image.runArgs("-d", "--name", c.name, "-v", dir+":"+dockerContainers, "-e", "PS1="+sessPrompt, b.image.tag,
		"/fifobridge", "run", "-dir", dockerContainers, "-mode", "sessions", "-tty", "-prompt", sessRegex, "-log-level", "error", "--", imageShell, "-i")
	if _, err := dockerCmd(args...); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// remove removes the container and its directory.
func (c *sessContainer) remove() {
	dockerCmd("rm", "-f", "-v", c.name)
	os.RemoveAll(c.dir)
}
