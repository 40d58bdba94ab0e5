//go:build linux

package test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/testgate"
)

// TestTerminalTostop: an agent run in the foreground of a job-control
// shell whose terminal has TOSTOP writes its log (and, every other time,
// its -tee copy) while its child has the terminal, and exits with the
// child's code in bounded time, with the terminal back with the shell;
// twenty times.
func TestTerminalTostop(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	shell, err := exec.LookPath("bash")
	if err != nil {
		testgate.Skip(t, "no bash for a job-control shell: %v", err)
	}
	term, slave := openPty(t)
	cmd := exec.Command(shell, "--norc", "--noprofile", "-i")
	cmd.Env = append(agentEnv(t), "PS1=$ ", "TERM=dumb")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", shell, err)
	}
	slave.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	dirs := t.TempDir()
	t.Cleanup(func() {
		if t.Failed() { // a stuck agent and its child: checkLeaks reports them
			for _, p := range markedProcs(marker(t)) {
				if p.pid != cmd.Process.Pid {
					syscall.Kill(p.pid, syscall.SIGKILL)
				}
			}
		}
		cmd.Process.Kill()
		<-exited
	})
	term.write("stty tostop; echo tostop-$((6*7))\n")
	term.expect("tostop-42")
	for i := range 20 {
		dir := filepath.Join(dirs, strconv.Itoa(i))
		began := time.Now()
		tee := i%2 == 1
		flags, script := "", `read x </dev/tty; exit 3`
		if tee {
			flags, script = "-tee", `read x </dev/tty; echo teed-$x-`+strconv.Itoa(i)+`; read x </dev/tty; exit 3`
		}
		term.write(fmt.Sprintf("%s run -restart never %s -dir %s -- %s sh -c '%s'; echo \"rc=$? trial %d\"\n",
			agentBin, flags, dir, busybox, script, i))
		var st status
		if !eventually(hangTimeout, func() bool {
			var err error
			st, err = readStatusFile(filepath.Join(dir, "status.json"))
			return err == nil && st.Child.PID > 0 && term.foreground() == st.Child.PID
		}) {
			t.Fatalf("trial %d: the child never got the terminal (status %+v, foreground %d)", i, st, term.foreground())
		}
		term.write("go\n")
		if tee {
			out := openReader(t, filepath.Join(dir, "out"))
			want := fmt.Sprintf("teed-go-%d", i)
			out.expectLine(want)
			out.close()
			term.expect(want) // written while the child has the terminal
			term.write("end\n")
		}
		term.expect(fmt.Sprintf("rc=3 trial %d", i))
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("trial %d took %v", i, d)
		}
		if pg := term.foreground(); pg != cmd.Process.Pid {
			t.Fatalf("trial %d: the terminal's foreground group is %d, want the shell's %d", i, pg, cmd.Process.Pid)
		}
	}
	if !strings.Contains(string(term.seen), `msg=exiting code=3`) {
		t.Errorf("the agent's log did not reach the terminal:\n%s", term.seen)
	}
	term.write("exit\n")
	select {
	case <-exited:
	case <-time.After(hangTimeout):
		t.Fatalf("the shell did not exit")
	}
}
