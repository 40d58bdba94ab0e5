//go:build linux

package test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The black-box tests start from a known signal state, whatever started
// them. Started under "nohup go test ... &" the test process inherits HUP
// (and INT and QUIT when a shell runs it in the background) as ignored; the
// Go runtime keeps an inherited ignore of HUP, INT, CONT, TSTP, TTIN and
// TTOU, and an ignored signal stays ignored across fork and exec. Every
// process the harness started would inherit those ignores, the agent
// rightly passes them on to its children, and a shell child cannot trap
// what it started with ignored. Blocked signals are inherited in the same
// way (the runtime restores the start-up mask in every child it forks).
//
// So, first thing, a test process that finds any signal ignored or blocked
// makes itself a clean start: it catches those signals (a handler, unlike
// an ignore, is reset to the default by exec), unblocks everything and
// re-executes itself, once, with the same pid, arguments and environment.
// The fresh image then catches and drops the signals it was shielded from
// (all but TTIN and TTOU, whose handler would loop on a terminal write), so
// that the run still survives the hangup nohup was for, while every process
// it starts begins with every signal at its default and none blocked. A
// test that asks for another state sets it up itself (helpers sigwrap and
// withsigstate). When a clean start cannot be had, knownSignals says why
// and every test that starts processes fails with that reason.

// sigResetEnv is set across the one re-exec: the hexadecimal set of the
// signals the test process found ignored or blocked (bit N-1 for signal N).
const sigResetEnv = "FIFOBRIDGE_TEST_SIGRESET"

// shieldedAtStart is the set of signals the test process found ignored or
// blocked at its start.
var shieldedAtStart uint64

// knownSignals is nil when the test process and the processes it starts
// begin with no signal ignored or blocked; otherwise why they do not.
var knownSignals error

// startFromKnownSignals makes the signal state of the test process known, as
// described above; it returns only when no re-exec is needed, or after the
// re-exec, and sets knownSignals.
func startFromKnownSignals() {
	if prev, ok := os.LookupEnv(sigResetEnv); ok {
		os.Unsetenv(sigResetEnv)
		shielded, err := strconv.ParseUint(prev, 16, 64)
		if err != nil {
			knownSignals = fmt.Errorf("bad %s=%q: %w", sigResetEnv, prev, err)
			return
		}
		shieldedAtStart = shielded
		dropSignals(shielded)
		knownSignals = checkNoSignalsSet("after re-executing itself with every signal reset")
		return
	}
	ign, blk, err := inheritedSignals()
	if err != nil {
		knownSignals = err
		return
	}
	if ign == 0 && blk == 0 {
		return
	}
	knownSignals = reexecWithCleanSignals(ign | blk)
}

// reexecWithCleanSignals replaces the test process by a fresh start of
// itself with every signal in set at its default and none blocked; it
// returns only on failure.
func reexecWithCleanSignals(set uint64) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the test binary to re-execute it: %w", err)
	}
	// The mask is the thread's, and exec keeps that of the thread calling
	// it.
	runtime.LockOSThread()
	// A handler where there was an ignore: exec resets it to the default.
	// A blocked signal that was pending is caught, not acted on, once
	// unblocked.
	signal.Notify(make(chan os.Signal, 1), signalsOf(set)...)
	var none unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &none, nil); err != nil {
		return fmt.Errorf("unblock every signal: %w", err)
	}
	os.Setenv(sigResetEnv, strconv.FormatUint(set, 16))
	err = syscall.Exec(self, os.Args, os.Environ())
	os.Unsetenv(sigResetEnv)
	return fmt.Errorf("re-execute the test binary with every signal reset: %w", err)
}

// dropSignals catches the signals of set and drops them, except TTIN and
// TTOU: to the test process, what it was shielded from stays harmless; to
// the processes it starts the handler means nothing, exec resets it.
func dropSignals(set uint64) {
	var sigs []os.Signal
	for _, sig := range signalsOf(set) {
		if sig != syscall.SIGTTIN && sig != syscall.SIGTTOU {
			sigs = append(sigs, sig)
		}
	}
	if len(sigs) > 0 {
		signal.Notify(make(chan os.Signal, 1), sigs...)
	}
}

// checkNoSignalsSet returns an error naming the signals the test process
// still has ignored or blocked.
func checkNoSignalsSet(when string) error {
	ign, blk, err := inheritedSignals()
	if err != nil {
		return err
	}
	if ign == 0 && blk == 0 {
		return nil
	}
	return fmt.Errorf("%s, the test process still has signals ignored [%s] and blocked [%s], "+
		"and every process it starts would inherit them; start the tests with none ignored or blocked",
		when, signalNames(ign), signalNames(blk))
}

// inheritedSignals returns the signals a process started by the test
// process begins with ignored and blocked: those of a cat(1) that reads its
// own status. (Go's threads differ in their masks, the one that relays
// signals to os/signal blocks most, but a child gets the mask the process
// started with.)
func inheritedSignals() (ignored, blocked uint64, err error) {
	out, err := exec.Command("cat", "/proc/self/status").Output()
	if err != nil {
		return 0, 0, fmt.Errorf("read the signal state of a child: %w", err)
	}
	ignored, blocked = parseProcSigMasks(string(out))
	return ignored, blocked, nil
}

// signalsOf lists the signals of set but KILL and STOP, which are never
// ignored or blocked.
func signalsOf(set uint64) []os.Signal {
	var sigs []os.Signal
	for n := 1; n <= 64; n++ {
		sig := syscall.Signal(n)
		if set&sigBit(sig) != 0 && sig != syscall.SIGKILL && sig != syscall.SIGSTOP {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

func signalNames(set uint64) string {
	var names []string
	for n := 1; n <= 64; n++ {
		if set&sigBit(syscall.Signal(n)) != 0 {
			names = append(names, sigName(syscall.Signal(n)))
		}
	}
	return strings.Join(names, " ")
}

// requireKnownSignals fails t when the harness could not give the
// processes it starts a known signal state.
func requireKnownSignals(t *testing.T) {
	t.Helper()
	if knownSignals != nil {
		t.Fatalf("the processes this test starts would not begin from a known signal state: %v", knownSignals)
	}
}

// TestSignalStartState: whatever the test process was started with, an
// agent's child (and the test process) has no signal ignored or blocked,
// and the signals the test process was started ignoring or blocking do not
// kill it. Run the suite under "nohup go test ./test/ &" for this to mean
// something there; TestSignalStartUnclean runs it so.
func TestSignalStartState(t *testing.T) {
	// Not parallel: it sends signals to this process itself.
	requireKnownSignals(t)
	checkLeaks(t, true)
	if ign, blk, err := inheritedSignals(); err != nil || ign != 0 || blk != 0 {
		t.Errorf("a child of the test process: ignored [%s], blocked [%s] (%v)", signalNames(ign), signalNames(blk), err)
	}
	for _, sig := range signalsOf(shieldedAtStart) {
		if sig == syscall.SIGTTIN || sig == syscall.SIGTTOU {
			continue
		}
		got := make(chan os.Signal, 1)
		signal.Notify(got, sig)
		syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		select {
		case <-got: // it came, and was dropped: the test process lives on
		case <-time.After(hangTimeout):
			t.Errorf("%s sent to the test process never came", sigName(sig.(syscall.Signal)))
		}
		signal.Stop(got)
	}
	a := startAgent(t, agentConfig{program: helperProgram(), helper: "sigstate"})
	r := openReader(t, a.out)
	ign, blk := parseSigMasks(t, r.readLine())
	r.expectLine("ready")
	if ign != reservedIgnored() || blk != 0 {
		t.Errorf("the agent's child: ignored [%s], blocked [%s]", signalNames(ign), signalNames(blk))
	}
	a.stop()
	r.close()
}

// TestSignalStartUnclean starts this test binary as a test run of its own
// (TestSignalStartState alone) with signals ignored and blocked, as nohup,
// a background job of a shell or a careless parent leave them: the run
// passes. A run that cannot clean its state (made to believe it has
// re-executed itself already) fails and says why.
func TestSignalStartUnclean(t *testing.T) {
	t.Parallel()
	requireKnownSignals(t)
	checkLeaks(t, false)
	run := func(blocked, ignored []syscall.Signal, env ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, selfBin, sigCSV(blocked), sigCSV(ignored), "",
			selfBin, "-test.run=^TestSignalStartState$", "-test.count=1", "-test.v")
		// The agent is built already.
		cmd.Env = append(append(agentEnv(t), helperEnv+"=sigwrap", binaryEnv+"="+agentBin), env...)
		cmd.SysProcAttr = dieWithTest()
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("run the tests under sigwrap: %v", err)
		}
		return string(out), err
	}
	ignored := []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGTSTP, syscall.SIGTTOU}
	blocked := []syscall.Signal{syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGTTIN, syscall.SIGWINCH, 40}
	if out, err := run(blocked, ignored); err != nil || !strings.Contains(out, "--- PASS: TestSignalStartState") {
		t.Errorf("a run started with signals ignored and blocked did not pass (%v):\n%s", err, out)
	}
	out, err := run(nil, []syscall.Signal{syscall.SIGHUP}, sigResetEnv+"=0")
	if err == nil || !strings.Contains(out, "would not begin from a known signal state") || !strings.Contains(out, "signals ignored [HUP]") {
		t.Errorf("a run that could not clean its signal state did not fail saying why (%v):\n%s", err, out)
	}
}
