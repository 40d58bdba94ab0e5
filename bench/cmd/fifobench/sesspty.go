//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/internal/tty"
)

// ptyShell is a program on a pseudo-terminal of the harness's own, as a
// person's terminal emulator holds it: the harness keeps the master, the
// program leads a new session with the slave as its controlling terminal.
type ptyShell struct {
	cmd    *exec.Cmd
	master *os.File
	got    []byte // what the terminal gave since the last readTo
}

// startPTY starts argv, with env added to the harness's environment, on
// a new 80x24 pseudo-terminal.
func startPTY(argv, env []string) (*ptyShell, error) {
	master, slave, err := tty.OpenPTY(tty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	slave.Close()
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("start %s on a terminal: %w", argv[0], err)
	}
	return &ptyShell{cmd: cmd, master: master}, nil
}

// readTo reads the terminal until what it gave, less escape sequences
// (a shell's line editing may send some around its prompt), ends with
// end, and returns that, less end.
func (p *ptyShell) readTo(end string) (string, error) {
	p.master.SetReadDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, 4096)
	for !strings.HasSuffix(stripCSI(p.got), end) {
		n, err := p.master.Read(buf)
		p.got = append(p.got, buf[:n]...)
		if err != nil {
			return "", fmt.Errorf("%s before %q: %w (read %q)", p.cmd.Args[0], end, err, p.got)
		}
	}
	s := strings.TrimSuffix(stripCSI(p.got), end)
	p.got = p.got[:0]
	return s, nil
}

// stripCSI is b as text, less its control sequences (ESC [, parameters,
// a final byte from @ to ~).
func stripCSI(b []byte) string {
	var s strings.Builder
	for i := 0; i < len(b); i++ {
		if b[i] != 0x1b || i+1 == len(b) || b[i+1] != '[' {
			s.WriteByte(b[i])
			continue
		}
		j := i + 2
		for j < len(b) && (b[j] < '@' || b[j] > '~') {
			j++
		}
		i = j // past the final byte, or the end of an unfinished one
	}
	return s.String()
}

// typeIn writes s to the terminal, as typed.
func (p *ptyShell) typeIn(s string) error {
	_, err := p.master.Write([]byte(s))
	return err
}

// end types exit, waits for the program (SIGKILL after stopPatience),
// and closes the master.
func (p *ptyShell) end() error {
	err := p.typeIn("exit\n")
	if werr := waitOrKill(p.cmd, stopPatience); err == nil {
		err = werr
	}
	p.master.Close()
	return err
}

// ptyCycle is one cycle of a shell on the harness's terminal: argv
// started, its first prompt read, command typed and read up to the next
// prompt, exit typed and the shell waited for. It returns the command's
// answer, when it is answer (a line, "\n" ended): the text between its
// echo and the prompt, with the terminal's \r\n as \n.
func ptyCycle(argv, env []string, command, answer string) (string, error) {
	p, err := startPTY(argv, env)
	if err != nil {
		return "", err
	}
	answer, err = p.exchange(command, answer)
	if eerr := p.end(); err == nil {
		err = eerr
	}
	return answer, err
}

// exchange reads the first prompt, types command and reads its answer,
// which must be answer, up to the next prompt.
func (p *ptyShell) exchange(command, answer string) (string, error) {
	if _, err := p.readTo(sessPrompt); err != nil {
		return "", err
	}
	if err := p.typeIn(command + "\n"); err != nil {
		return "", err
	}
	echo := command + "\r\n"
	answerTTY := strings.TrimSuffix(answer, "\n") + "\r\n"
	got, err := p.readTo(answerTTY + sessPrompt)
	if err != nil {
		return "", err
	}
	// Line editing may redraw the prompt and the line before its echo ends.
	if !strings.HasSuffix(got, echo) {
		return "", fmt.Errorf("the terminal gave %q, want the echo and the answer", got+answerTTY)
	}
	return answer, nil
}
