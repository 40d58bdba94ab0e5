//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// scaleBash is the shell of every session of the scale part: bash
// without its start files, interactive.
func (b *bench) scaleBash() []string { return []string{b.tools["bash"], "--norc", "--noprofile", "-i"} }

// scaleShell is scaleBash with the prompt sessPrompt, as either
// contender runs it.
func (b *bench) scaleShell() []string {
	return append([]string{b.tools["env"], "PS1=" + sessPrompt}, b.scaleBash()...)
}

// The arguments of the scale part's agent after -dir and -log-level:
// room for the most sessions of the run and one more.
func scaleArgs(b *bench) []string {
	most := slices.Max(append([]int{1}, b.scaleNs...))
	return append([]string{"-mode", "sessions", "-max-sessions", strconv.Itoa(most + 1), "-tty", "-prompt", sessRegex, "--"}, b.scaleShell()...)
}

// agentSide is a sessions agent driven by fifobridge's commands.
type agentSide struct {
	b   *bench
	rn  *running
	dir string
}

// startSessionsAgent starts contender name, a sessions agent, and waits
// until it serves.
func (b *bench) startSessionsAgent(name string) (*agentSide, error) {
	rn, err := b.start(name, unpinned)
	if err != nil {
		return nil, err
	}
	s := &agentSide{b: b, rn: rn, dir: filepath.Dir(rn.in)}
	if _, err := s.cli("health", "-wait", "30s"); err != nil {
		rn.stop()
		return nil, err
	}
	return s, nil
}

// cli runs `fifobridge COMMAND -dir DIR ARGS...` and returns its stdout.
func (s *agentSide) cli(command string, args ...string) (string, error) {
	return output(append([]string{s.b.bin, command, "-dir", s.dir}, args...))
}

func (s *agentSide) pid() int { return s.rn.pid() }

func (s *agentSide) open(name string) error {
	_, err := s.cli("open", name)
	return err
}

func (s *agentSide) settle(string) error { return nil }

func (s *agentSide) ls() error {
	_, err := s.cli("ls")
	return err
}

func (s *agentSide) ask(name string) (string, error) {
	return s.cli("ask", "-session", name, scaleCommand)
}

func (s *agentSide) close(name string) error {
	_, err := s.cli("close", name)
	return err
}

// stop sends the agent SIGTERM and times its exit and its sessions'
// processes' exits, then waits for what is left (SIGKILL after
// scaleStopPatience) and removes its FIFOs.
func (s *agentSide) stop() (stopTimes, error) {
	kids := openTree(s.pid())
	defer kids.waitGone(stopPatience)
	defer s.rn.release()
	begin := time.Now()
	s.rn.cmd.Process.Signal(unix.SIGTERM)
	exited := make(chan exitAt, 1)
	go func() {
		err := waitOrKill(s.rn.cmd, scaleStopPatience)
		exited <- exitAt{time.Now(), err}
	}()
	last, kerr := kids.lastExit(scaleStopPatience)
	e := <-exited
	if e.err != nil && !endedByTERM(e.err) {
		return stopTimes{}, fmt.Errorf("stop %s: %w", s.rn.name, e.err)
	}
	return stopTimes{process: e.at.Sub(begin), kids: last.Sub(begin)}, kerr
}

// exitAt is when a process was seen to exit, and how.
type exitAt struct {
	at  time.Time
	err error
}
