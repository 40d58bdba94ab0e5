//go:build linux

// Package test holds the black-box tests of fifobridge: they build the real
// binary once and drive it through its command line, its FIFOs, its status
// file, signals and exit codes, exactly as CONTRACT.md describes them.
//
// The test binary doubles as the children the agent supervises: when
// FIFOBRIDGE_TEST_HELPER names a helper (see helpers_test.go), TestMain runs
// that helper with the remaining arguments and exits instead of running tests.
// It is also the launcher that reports a wrapped agent's pid
// (wrapped_test.go). Before running tests, TestMain gives itself, and so
// every process the tests start, a known signal state: nothing ignored or
// blocked (signalstart_test.go).
package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const (
	// helperEnv selects a helper program of the test binary.
	helperEnv = "FIFOBRIDGE_TEST_HELPER"
	// markerEnv marks every process a test starts, so that leftovers can
	// be found in /proc/*/environ. Its value starts with the pid of the
	// test process.
	markerEnv = "FIFOBRIDGE_TEST_RUN"
	// binaryEnv names a fifobridge binary to test instead of building one.
	binaryEnv = "FIFOBRIDGE_TEST_BINARY"
	// raceEnv=1 builds the binary under test with -race: a data race it
	// reports fails the test that ran it (see checkRace).
	raceEnv = "FIFOBRIDGE_TEST_RACE"
	// tempPrefix names the one directory under os.TempDir() that holds all
	// of a run's temporary files, followed by the test process's pid.
	tempPrefix = "fifobridge-test-run-"
)

var (
	// agentBin is the fifobridge binary built by TestMain.
	agentBin string
	// selfBin is the test binary, run by the agent as a helper child.
	selfBin string
	// busybox runs a command of the base system: "busybox APPLET ARG..."
	// runs APPLET from $PATH (it is env(1); the tests once used busybox
	// and still call it so). Scripts for "busybox sh -c" run in /bin/sh
	// and use only POSIX sh and coreutils/util-linux commands.
	busybox string
	// raceBuild is set when agentBin was built with -race.
	raceBuild bool
)

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && strings.HasPrefix(os.Args[1], execReportArg) {
		os.Exit(execReport(strings.TrimPrefix(os.Args[1], execReportArg), os.Args[2:]))
	}
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(runHelper(name, os.Args[1:]))
	}
	startFromKnownSignals()
	os.Exit(runTests(m))
}

// runTests runs the tests with every temporary file under one directory,
// removed at the end. A run that times out (go test -timeout panics and
// exits without running deferred calls) leaves nothing running: the agents
// the harness starts die with the test process (Pdeathsig), and the next
// run kills what is left of a dead run's processes and removes its
// directory before it starts.
func runTests(m *testing.M) int {
	if knownSignals != nil {
		fmt.Fprintf(os.Stderr, "fifobridge tests: %v\n", knownSignals)
	}
	cleanDeadRuns()
	tmp, err := os.MkdirTemp("", tempPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "create temp dir: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// Like /tmp, every user may pass through it (tests run programs as
	// uid 65534 from directories they make accessible), but not list it.
	if err := os.Chmod(tmp, 0o711); err != nil {
		fmt.Fprintf(os.Stderr, "chmod temp dir: %v\n", err)
		return 1
	}
	// t.TempDir, os.MkdirTemp and every process started inherit this.
	os.Setenv("TMPDIR", tmp)
	if os.Getenv("GORACE") == "" {
		// A race-built agent (or helper) stops at the first race it sees,
		// and exits at once instead of sleeping a second at every exit
		// (atexit_sleep_ms=1000), which timed stops would count.
		os.Setenv("GORACE", "halt_on_error=1 exitcode=66 atexit_sleep_ms=0")
	}

	// FIFOBRIDGE_TEST_BINARY runs the suite against a binary built
	// elsewhere (a release, or a deliberately broken build).
	if agentBin = os.Getenv(binaryEnv); agentBin == "" {
		raceBuild = os.Getenv(raceEnv) == "1"
		if agentBin, err = buildAgent(tmp, raceBuild); err != nil {
			fmt.Fprintf(os.Stderr, "%v\n", err)
			return 1
		}
	}

	if selfBin, err = os.Executable(); err != nil {
		fmt.Fprintf(os.Stderr, "find test binary: %v\n", err)
		return 1
	}
	if busybox, err = exec.LookPath("env"); err != nil {
		fmt.Fprintf(os.Stderr, "find env(1): %v\n", err)
		return 1
	}

	// The runtime creates its epoll descriptor and wake-up eventfd on first
	// use of the poller; do that now so fd counts of this process taken in
	// tests do not change because of it.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	defaultParallel()
	leaks := startRunLeaks()
	code := m.Run()
	if code == 0 {
		if why := leaks.check(); why != "" {
			fmt.Fprintf(os.Stderr, "FAIL: %s", why)
			code = 1
		}
	}
	return code
}

// buildAgent builds fifobridge into dir: static, or with -race (which needs
// cgo).
func buildAgent(dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "fifobridge")
	args := []string{"build", "-o", bin}
	env := append(os.Environ(), "CGO_ENABLED=0")
	if race {
		args = append(args, "-race")
		env = append(os.Environ(), "CGO_ENABLED=1")
	}
	build := exec.Command("go", append(args, "github.com/fifobridge/fifobridge/cmd/fifobridge")...)
	build.Env = env
	build.Stdout = os.Stderr
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build fifobridge (race %v): %w", race, err)
	}
	return bin, nil
}

// cleanDeadRuns kills the processes and removes the temporary directories
// of test runs whose test process is gone (a run killed by its -timeout).
// Runs still alive, in other checkouts too, are left alone.
func cleanDeadRuns() {
	prefix := []byte(markerEnv + "=")
	for _, pid := range pids() {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if owner, ok := runPID(kv, prefix); ok && !processExists(owner) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, dir := range dirs {
		rest := strings.TrimPrefix(filepath.Base(dir), tempPrefix)
		owner, err := strconv.Atoi(strings.Split(rest, "-")[0])
		if err == nil && owner != os.Getpid() && !processExists(owner) {
			os.RemoveAll(dir)
		}
	}
}

// runPID returns the test process pid that a markerEnv=PID/TEST variable
// names.
func runPID(kv, prefix []byte) (int, bool) {
	v, ok := bytes.CutPrefix(kv, prefix)
	if !ok {
		return 0, false
	}
	owner, _, _ := bytes.Cut(v, []byte("/"))
	pid, err := strconv.Atoi(string(owner))
	return pid, err == nil && pid > 0
}

func processExists(pid int) bool {
	return syscall.Kill(pid, 0) != syscall.ESRCH
}
