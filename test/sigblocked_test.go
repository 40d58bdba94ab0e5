//go:build linux

package test

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func init() {
	helpers["sigwrap"] = helperSigWrap
	helpers["sigmasks"] = helperSigMasks
}

// sigwrap BLOCKED IGNORED HELPER PROGRAM ARG...: block the signals of the
// comma-separated list BLOCKED, ignore those of IGNORED, and exec PROGRAM
// with HELPER as the helper its children run.
func helperSigWrap(args []string) int {
	runtime.LockOSThread() // the mask is the thread's, and exec keeps it
	var set unix.Sigset_t
	for _, sig := range sigList(args[0]) {
		sigaddset(&set, sig)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
		fmt.Fprintf(os.Stderr, "sigwrap: %v\n", err)
		return 2
	}
	for _, sig := range sigList(args[1]) {
		signal.Ignore(sig)
	}
	os.Setenv(helperEnv, args[2])
	err := syscall.Exec(args[3], args[3:], os.Environ())
	fmt.Fprintf(os.Stderr, "sigwrap: exec %s: %v\n", args[3], err)
	return 2
}

// sigmasks: print "ignored HEX blocked HEX" as sigstate does, and exit 0.
func helperSigMasks([]string) int {
	ign, blk := procSigMasks("self")
	fmt.Printf("ignored %016x blocked %016x\n", ign, blk)
	return 0
}

func sigList(s string) []syscall.Signal {
	var sigs []syscall.Signal
	for _, f := range strings.Split(s, ",") {
		if f != "" {
			sigs = append(sigs, syscall.Signal(atoi(f)))
		}
	}
	return sigs
}

func sigCSV(sigs []syscall.Signal) string {
	var f []string
	for _, sig := range sigs {
		f = append(f, strconv.Itoa(int(sig)))
	}
	return strings.Join(f, ",")
}

// parseSigMasks reads a sigstate or sigmasks line.
func parseSigMasks(t *testing.T, line string) (ign, blk uint64) {
	t.Helper()
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "ignored %x blocked %x", &ign, &blk); err != nil {
		t.Fatalf("child said %q: %v", line, err)
	}
	return ign, blk
}

// TestSignalBlockedInherited: signals that stayed blocked in the agent's
// inherited mask are blocked in its children, in stream, exec and terminal
// mode, and the signals it inherited as ignored stay ignored; but a
// terminal child starts with HUP, INT, QUIT, TSTP, TTIN and TTOU at their
// default and not blocked, as a person's session does. Blocked signals
// alone, as a supervisor may leave them, take another path through a
// start than blocked and ignored ones together (nothing to ignore around
// the fork): both are tried.
func TestSignalBlockedInherited(t *testing.T) {
	t.Parallel()
	t.Run("blocked", func(t *testing.T) {
		testSignalBlockedInherited(t, []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, 40}, nil)
	})
	t.Run("blocked and ignored", func(t *testing.T) {
		testSignalBlockedInherited(t,
			[]syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, 40, syscall.SIGTTIN, syscall.SIGTTOU},
			[]syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTSTP})
	})
}

func testSignalBlockedInherited(t *testing.T, blocked, ignored []syscall.Signal) {
	jobControl := []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}
	start := func(t *testing.T, flags []string, helper string) *agent {
		return startAgent(t, agentConfig{
			flags:     flags,
			wrap:      []string{selfBin, sigCSV(blocked), sigCSV(ignored), helper},
			wrapExecs: true,
			env:       []string{helperEnv + "=sigwrap"},
			program:   helperProgram(),
		})
	}
	want := func(t *testing.T, ign, blk uint64, terminal bool) {
		t.Helper()
		for _, sig := range blocked {
			if terminal && slices.Contains(jobControl, sig) {
				continue
			}
			if blk&sigBit(sig) == 0 {
				t.Errorf("%s is not blocked in the child: SigBlk %016x", sigName(sig), blk)
			}
		}
		for _, sig := range ignored {
			if !terminal && ign&sigBit(sig) == 0 {
				t.Errorf("%s is not ignored in the child: SigIgn %016x", sigName(sig), ign)
			}
		}
		if !terminal {
			return
		}
		for _, sig := range jobControl {
			if blk&sigBit(sig) != 0 || ign&sigBit(sig) != 0 {
				t.Errorf("%s is blocked or ignored in the terminal child: SigBlk %016x SigIgn %016x", sigName(sig), blk, ign)
			}
		}
	}

	t.Run("stream", func(t *testing.T) {
		checkLeaks(t, false)
		a := start(t, nil, "sigstate")
		r := openReader(t, a.out)
		ign, blk := parseSigMasks(t, r.readLine())
		r.expectLine("ready")
		want(t, ign, blk, false)
		if code := a.stop(); code != 143 {
			t.Fatalf("agent exited with %d, want 143 (the child's TERM)", code)
		}
		r.close()
	})
	t.Run("exec", func(t *testing.T) {
		checkLeaks(t, false)
		a := start(t, []string{"-mode", "exec"}, "sigmasks")
		r := openReader(t, a.out)
		w := openWriter(t, a.in)
		w.writeLine(`{"id":"m"}`)
		resp := nextResponse(t, r)
		if resp.exit == nil || *resp.exit.Code != 0 {
			t.Fatalf("request did not exit 0:%s", resp)
		}
		ign, blk := parseSigMasks(t, string(resp.stdout))
		want(t, ign, blk, false)
		w.close()
		if code := a.stop(); code != 0 {
			t.Fatalf("agent exited with %d, want 0", code)
		}
		r.close()
	})
	t.Run("terminal", func(t *testing.T) {
		checkLeaks(t, false)
		a := start(t, []string{"-tty"}, "sigstate")
		r := openReader(t, a.out)
		ign, blk := parseSigMasks(t, r.waitTTYLine("blocked"))
		r.waitTTYLine("ready")
		want(t, ign, blk, true)
		a.stop()
		r.close()
	})
}
