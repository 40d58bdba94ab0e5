//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// tmuxSide is a tmux server of its own (its socket and configuration in
// a directory of the run), driven by tmux's commands as a script drives
// it. The harness is a child subreaper, so the server, which daemonizes,
// is its child: stop reaps it.
type tmuxSide struct {
	b      *bench
	dir    string
	server int // the server's pid
	pidfd  int // the server's pidfd
	waits  int // wait-for channels used
}

// startTmux starts a tmux server with no session, kept when it has none
// (exit-empty off), and opens a pidfd of it.
func (b *bench) startTmux() (*tmuxSide, error) {
	dir, err := os.MkdirTemp(b.work, "tmux-")
	if err != nil {
		return nil, err
	}
	s := &tmuxSide{b: b, dir: dir, pidfd: -1}
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g exit-empty off\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if _, err := s.run("-f", conf, "start-server"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	out, err := s.run("display-message", "-p", "#{pid}")
	if err == nil {
		s.server, err = strconv.Atoi(strings.TrimSpace(out))
	}
	if err == nil {
		s.pidfd, err = unix.PidfdOpen(s.server, 0)
	}
	if err != nil {
		s.run("kill-server")
		os.RemoveAll(dir)
		return nil, fmt.Errorf("find the tmux server: %w", err)
	}
	return s, nil
}

// run runs tmux on the server's socket with args, and returns its stdout.
func (s *tmuxSide) run(args ...string) (string, error) {
	return output(append([]string{s.b.tools["tmux"], "-S", s.sock()}, args...))
}

func (s *tmuxSide) sock() string { return filepath.Join(s.dir, "sock") }

func (s *tmuxSide) pid() int { return s.server }

func (s *tmuxSide) open(name string) error {
	_, err := s.run(append([]string{"new-session", "-d", "-s", name, "-x", "80", "-y", "24"}, s.b.scaleShell()...)...)
	return err
}

// settle types a wait-for signal into session name's shell and waits for
// it: the shell has read its line then, and prints its prompt next.
func (s *tmuxSide) settle(name string) error {
	_, err := s.typeAndWait(name, "")
	return err
}

func (s *tmuxSide) ls() error {
	_, err := s.run("list-sessions")
	return err
}

// ask types `echo hi` and a wait-for signal into session name's shell
// (send-keys), waits for the signal (wait-for), and reads the pane
// (capture-pane): what a script does to ask a tmux session one thing.
func (s *tmuxSide) ask(name string) (string, error) {
	return s.typeAndWait(name, scaleCommand)
}

func (s *tmuxSide) close(name string) error {
	_, err := s.run("kill-session", "-t", name)
	return err
}

// typeAndWait types command (none when "") followed by a tmux wait-for
// signal on a new channel into session name, waits for the signal, and
// with a command returns its answer from the pane: its last line before
// the prompt, once the server has read it.
func (s *tmuxSide) typeAndWait(name, command string) (string, error) {
	s.waits++
	channel := "w" + strconv.Itoa(s.waits)
	signal := shellQuote(s.b.tools["tmux"]) + " -S " + shellQuote(s.sock()) + " wait-for -S " + channel
	if command != "" {
		signal = command + "; " + signal
	}
	if _, err := s.run("send-keys", "-t", name, signal, "Enter"); err != nil {
		return "", err
	}
	if _, err := s.run("wait-for", channel); err != nil {
		return "", err
	}
	if command == "" {
		return "", nil
	}
	// The shell wrote its answer before it signalled; the server may
	// read the signal's client before the pane's output.
	var pane string
	for range 100 {
		out, err := s.run("capture-pane", "-p", "-t", name)
		if err != nil {
			return "", err
		}
		if pane = out; lastAnswer(pane) == scaleAnswer {
			return scaleAnswer, nil
		}
	}
	return "", fmt.Errorf("no answer %q in the pane of %s: %q", scaleAnswer, name, pane)
}

// lastAnswer is the pane's last line before the prompt, as a line: what
// a command typed last answered when its output is one line.
func lastAnswer(pane string) string {
	lines := strings.Split(strings.TrimRight(pane, " \n"), "\n")
	if n := len(lines); n > 0 && strings.TrimRight(lines[n-1], " ") == strings.TrimSpace(sessPrompt) {
		lines = lines[:n-1]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.TrimRight(lines[len(lines)-1], " ") + "\n"
}

// stop runs kill-server and times the server's exit and its sessions'
// processes' exits, then reaps the server and waits for what is left
// (SIGKILL after scaleStopPatience), and removes the directory.
func (s *tmuxSide) stop() (stopTimes, error) {
	kids := openTree(s.server)
	defer os.RemoveAll(s.dir)
	defer kids.waitGone(stopPatience)
	defer tree{s.pidfd}.waitGone(stopPatience)
	begin := time.Now()
	if _, err := s.run("kill-server"); err != nil {
		return stopTimes{}, err
	}
	at, err := lastExits(scaleStopPatience, tree{s.pidfd}, kids)
	return stopTimes{process: at[0].Sub(begin), kids: at[1].Sub(begin)}, err
}
