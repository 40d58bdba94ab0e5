//go:build linux

package test

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	helpers["catchall"] = helperCatchAll
	helpers["sigstate"] = helperSigState
	helpers["withsigstate"] = helperWithSigState
}

// matrixSignals are the signals the matrix sends to the agent: 1 to 31 but
// KILL, STOP, CHLD, PIPE, URG, PROF and the stop signals TERM and INT, and
// some realtime ones.
var matrixSignals = func() []syscall.Signal {
	var sigs []syscall.Signal
	for sig := syscall.Signal(1); sig <= 31; sig++ {
		switch sig {
		case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGCHLD, syscall.SIGPIPE,
			syscall.SIGURG, syscall.SIGPROF, syscall.SIGTERM, syscall.SIGINT:
			continue
		}
		sigs = append(sigs, sig)
	}
	return append(sigs, 35, 50, 64)
}()

// sigName is how helpers print a signal: "HUP", or its number.
func sigName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return strings.TrimPrefix(n, "SIG")
	}
	return strconv.Itoa(int(sig))
}

// catchall: catch every signal the matrix sends and TERM, say "ready", then
// print the name of each signal it receives and echo each input line, one
// line each; exit 0 after TERM.
func helperCatchAll([]string) int {
	c := make(chan os.Signal, 64)
	for _, sig := range append(matrixSignals, syscall.SIGTERM) {
		signal.Notify(c, sig)
	}
	var mu sync.Mutex
	say := func(s string) { mu.Lock(); fmt.Println(s); mu.Unlock() }
	say("ready")
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			say(sc.Text())
		}
	}()
	for sig := range c {
		say(sigName(sig.(syscall.Signal)))
		if sig == syscall.SIGTERM {
			return 0
		}
	}
	return 1
}

// expectStopSignal reads what catchall printed for the agent's stop: TERM,
// which the SIGCONT that follows it may overtake on its way to the
// helper's signal loop (the runtime hands on separate signals in no set
// order); the helper exits at TERM.
func expectStopSignal(r *fifoEnd) {
	r.t.Helper()
	line := r.readLine()
	if line == "CONT" {
		line = r.readLine()
	}
	if line != "TERM" {
		r.t.Fatalf("read line %q from %s, want TERM (after CONT, maybe)", line, r.path)
	}
}

// sigstate: print "ignored HEX blocked HEX" (SigIgn and SigBlk of this
// process, read first thing), then "ready", and sleep until killed.
func helperSigState([]string) int {
	ign, blk := procSigMasks("self")
	fmt.Printf("ignored %016x blocked %016x\n", ign, blk)
	return helperSleep(nil)
}

// withsigstate HELPER PROGRAM ARG...: ignore HUP and TTOU, block USR2 and
// TTIN, and exec PROGRAM with HELPER as the helper its children run.
func helperWithSigState(args []string) int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGTTOU)
	runtime.LockOSThread() // the mask is the thread's, and exec keeps it
	var set unix.Sigset_t
	for _, sig := range []syscall.Signal{syscall.SIGUSR2, syscall.SIGTTIN} {
		sigaddset(&set, sig)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
		fmt.Fprintf(os.Stderr, "withsigstate: %v\n", err)
		return 2
	}
	os.Setenv(helperEnv, args[0])
	err := syscall.Exec(args[1], args[1:], os.Environ())
	fmt.Fprintf(os.Stderr, "withsigstate: exec %s: %v\n", args[1], err)
	return 2
}

// procSigMasks returns SigIgn and SigBlk of /proc/PID/status.
func procSigMasks(pid string) (ignored, blocked uint64) {
	b, _ := os.ReadFile("/proc/" + pid + "/status")
	return parseProcSigMasks(string(b))
}

// parseProcSigMasks returns SigIgn and SigBlk of a /proc/PID/status text.
func parseProcSigMasks(status string) (ignored, blocked uint64) {
	for _, line := range strings.Split(status, "\n") {
		k, v, _ := strings.Cut(line, ":")
		n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		switch k {
		case "SigIgn":
			ignored = n
		case "SigBlk":
			blocked = n
		}
	}
	return ignored, blocked
}

func sigBit(sig syscall.Signal) uint64 { return 1 << (sig - 1) }

// reservedIgnored is what an agent's child starts with ignored: 32 and 34
// where the agent has no handler of its own for them (internal/sigreserved),
// nothing on amd64 and arm64.
func reservedIgnored() uint64 {
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		return 0
	}
	return sigBit(32) | sigBit(34)
}

// sigaddset adds sig to set, whose words have 32 bits on 32-bit systems.
func sigaddset(set *unix.Sigset_t, sig syscall.Signal) {
	n, w := uint(sig)-1, uint(unsafe.Sizeof(set.Val[0]))*8
	set.Val[n/w] |= 1 << (n % w)
}

// TestSignalMatrix sends the agent every signal but the stop signals, one at
// a time; its child, which catches them all, gets each exactly once, and the
// agent neither dies nor stops and keeps serving.
func TestSignalMatrix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		wrap []string
	}{
		{"PID 1", []string{"unshare", "-pf", "--mount-proc"}},
		{"not PID 1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wrap != nil {
				requirePrivileged(t, "a PID namespace needs root and unshare(1)")
			}
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{wrap: tc.wrap, program: helperProgram(), helper: "catchall"})
			r := openReader(t, a.out)
			r.expectLine("ready")
			w := openWriter(t, a.in)
			for _, sig := range matrixSignals {
				a.signal(sig)
				// The name comes once, then the echo: a second copy
				// would come between them.
				r.expectLine(sigName(sig))
				w.writeLine("after " + sigName(sig))
				r.expectLine("after " + sigName(sig))
				if st, err := readStat(a.pid); err != nil || st.state == 'T' || st.state == 'Z' {
					t.Fatalf("agent after %s: state %q, %v", sigName(sig), st.state, err)
				}
			}
			a.requireRunning()
			w.close()
			if code := a.stop(); code != 0 {
				t.Fatalf("agent exited with %d, want the child's 0", code)
			}
			expectStopSignal(r)
			r.close()
		})
	}
}

// TestSignalAgentSurvivesFaultSignals: a fault signal sent with kill(2) to
// the agent is forwarded like any other; the agent goes on and exits with
// its child's status, which died of the signal.
func TestSignalAgentSurvivesFaultSignals(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requireBusybox(t)
	for _, sig := range []syscall.Signal{syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE,
		syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS, syscall.Signal(16)} {
		a := startAgent(t, agentConfig{flags: []string{"-restart", "never"},
			program: []string{busybox, "sh", "-c", `echo ready; exec "$0" sleep 100`, busybox}})
		r := openReader(t, a.out)
		r.expectLine("ready")
		a.signal(sig)
		if code := a.wait(hangTimeout); code != 128+int(sig) {
			t.Fatalf("after %s the agent exited with %d, want the child's %d; stderr:\n%s", sigName(sig), code, 128+int(sig), a.stderr())
		}
		r.close()
	}
}

// TestSignalInheritedState: HUP and TTOU ignored and USR2 and TTIN blocked
// when the agent starts are so in its child, and a HUP sent to the agent
// does not kill the child.
func TestSignalInheritedState(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		wrap:      []string{selfBin, "sigstate"},
		wrapExecs: true, // the agent is the process started
		env:       []string{helperEnv + "=withsigstate"},
		program:   helperProgram(),
	})
	r := openReader(t, a.out)
	line := r.readLine()
	r.expectLine("ready")
	var ign, blk uint64
	if _, err := fmt.Sscanf(line, "ignored %x blocked %x", &ign, &blk); err != nil {
		t.Fatalf("child said %q: %v", line, err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTTOU} {
		if ign&sigBit(sig) == 0 {
			t.Errorf("%s is not ignored in the child: SigIgn %016x", sigName(sig), ign)
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGUSR2, syscall.SIGTTIN} {
		if blk&sigBit(sig) == 0 {
			t.Errorf("%s is not blocked in the child: SigBlk %016x", sigName(sig), blk)
		}
	}
	st := a.waitStatus("a running child", func(s status) bool { return s.State == "running" && s.Child.PID > 0 })
	a.signal(syscall.SIGHUP)
	if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), "signal=HUP") }) {
		t.Fatalf("the agent did not forward HUP; stderr:\n%s", a.stderr())
	}
	a.signal(syscall.SIGUSR2) // blocked in the child: it stays pending there
	if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), "signal=USR2") }) {
		t.Fatalf("the agent did not forward USR2; stderr:\n%s", a.stderr())
	}
	a.requireRunning()
	if now, err := a.readStatus(); err != nil || now.Child.PID != st.Child.PID || now.Child.Starts != 1 || !alive(st.Child.PID) {
		t.Fatalf("the child did not survive HUP: status %+v, %v", now, err)
	}
	if code := a.stop(); code != 143 {
		t.Fatalf("agent exited with %d, want 143 (the child's TERM)", code)
	}
	r.close()
}

// TestSignalReservedRealtime: 32 and 34, which Go cannot register, do not
// end the agent, and its child starts with them at their default where
// the agent has a handler for them (amd64, arm64), else ignored.
func TestSignalReservedRealtime(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{program: helperProgram(), helper: "catchall"})
	r := openReader(t, a.out)
	r.expectLine("ready")
	pid := a.waitChild()
	reserved := sigBit(32) | sigBit(34)
	if ign, _ := procSigMasks(strconv.Itoa(pid)); ign&reserved != reservedIgnored() {
		t.Errorf("the child's SigIgn %016x, want %016x for 32 and 34", ign, reservedIgnored())
	}
	for _, sig := range []syscall.Signal{32, 34} {
		a.signal(sig)
		roundTrip(t, a.in, r, "after "+sigName(sig))
		a.requireRunning()
	}
	if code := a.stop(); code != 0 {
		t.Fatalf("agent exited with %d, want the child's 0", code)
	}
	expectStopSignal(r)
	r.close()
}
