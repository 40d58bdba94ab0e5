//go:build linux

package test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/tty"
)

// The contract says the entries of /dev/pts do not grow with restarts or
// sessions. /dev/pts is the machine's: a tmux or another agent opening
// terminals meanwhile changes its count, so the tests count only the
// entries the agent made. An entry lives exactly as long as its master is
// open, and the agent is the subreaper of everything it starts, so the
// agent's entries are those whose master the agent or one of its
// descendants holds; the kernel names a master's entry in the master's
// fdinfo ("tty-index"). The leak tests run beside ptychurn, another
// process that opens and closes terminals all the while.

func init() {
	helpers["ptychurn"] = helperPTYChurn
}

// agentTerminals counts the entries of /dev/pts whose master pid or one of
// its descendants holds.
func agentTerminals(pid int) int {
	held := map[string]bool{}
	for _, p := range treeOf(pid) {
		masters, _, _ := terminalFDs(p)
		for _, fd := range masters {
			held[ttyIndex(p, fd)] = true
		}
	}
	return len(held)
}

// ttyIndex names the terminal of master descriptor fd of pid by its number
// in /dev/pts; where the kernel does not say it (an old kernel), by the
// descriptor, which still counts each master once.
func ttyIndex(pid int, fd string) string {
	info, _ := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd))
	for line := range strings.Lines(string(info)) {
		if n, ok := strings.CutPrefix(line, "tty-index:"); ok {
			return strings.TrimSpace(n)
		}
	}
	return fmt.Sprintf("pid %d fd %s", pid, fd)
}

// Pace and size of ptychurn: a terminal opened and one closed every
// churnPace, but one in churnKeep kept, up to churnMax held, so that the
// count of /dev/pts keeps rising while a test runs, as a tmux opening
// windows makes it.
const (
	churnPace = 5 * time.Millisecond
	churnKeep = 8
	churnMax  = 256
)

// ptychurn: open and close pseudo-terminals until stdin ends, holding
// more of them as it goes (see churnPace); say "churning" once it holds
// its first.
func helperPTYChurn([]string) int {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	var held []*os.File
	for step := 0; ; step++ {
		master, slave, err := tty.OpenPTY(tty.Winsize{Cols: 80, Rows: 24})
		if err != nil {
			fmt.Fprintf(os.Stderr, "ptychurn: %v\n", err)
			return 1
		}
		slave.Close()
		held = append(held, master)
		if step == 0 {
			os.Stdout.WriteString("churning\n")
		}
		if step%churnKeep != 0 || len(held) > churnMax {
			held[0].Close()
			held = held[1:]
		}
		// The pace is what this helper is about: another program's
		// terminals coming and going while a test counts its own.
		select {
		case <-done:
			return 0
		case <-time.After(churnPace):
		}
	}
}

// startPTYChurner starts ptychurn, as a process of its own, ends it when
// t ends, and returns its pid.
func startPTYChurner(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(selfBin)
	cmd.Env = append(agentEnv(t), helperEnv+"=ptychurn")
	cmd.SysProcAttr = dieWithTest()
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ptychurn: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("ptychurn: %v", err)
		}
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "churning\n" {
		t.Fatalf("ptychurn said %q (%v), want \"churning\"", line, err)
	}
	t.Logf("ptychurn (pid %d) opens and closes terminals meanwhile", cmd.Process.Pid)
	return cmd.Process.Pid
}
