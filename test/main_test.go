// Package test holds the black-box tests of fifobridge: they build the real
// binary once and drive it through its command line, its FIFOs, its status
// file, signals and exit codes, exactly as CONTRACT.md describes them.
//
// The test binary doubles as the children the agent supervises: when
// FIFOBRIDGE_TEST_HELPER names a helper (see helpers_test.go), TestMain runs
// that helper with the remaining arguments and exits instead of running tests.
package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const (
	// helperEnv selects a helper program of the test binary.
	helperEnv = "FIFOBRIDGE_TEST_HELPER"
	// markerEnv marks every process a test starts, so that leftovers can
	// be found in /proc/*/environ.
	markerEnv = "FIFOBRIDGE_TEST_RUN"
	// privilegedEnv turns skips of privileged tests into failures.
	privilegedEnv = "FIFOBRIDGE_REQUIRE_PRIVILEGED"
	// binaryEnv names a fifobridge binary to test instead of building one.
	binaryEnv = "FIFOBRIDGE_TEST_BINARY"
)

var (
	// agentBin is the fifobridge binary built by TestMain.
	agentBin string
	// selfBin is the test binary, run by the agent as a helper child.
	selfBin string
	// busybox is the path of busybox, or "" when it is not installed.
	busybox string
)

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(runHelper(name, os.Args[1:]))
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "fifobridge-test-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "create temp dir: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	// FIFOBRIDGE_TEST_BINARY runs the suite against a binary built
	// elsewhere (a release, or a deliberately broken build).
	if agentBin = os.Getenv(binaryEnv); agentBin == "" {
		agentBin = filepath.Join(tmp, "fifobridge")
		build := exec.Command("go", "build", "-o", agentBin, "github.com/fifobridge/fifobridge/cmd/fifobridge")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stdout = os.Stderr
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build fifobridge: %v\n", err)
			return 1
		}
	}

	if selfBin, err = os.Executable(); err != nil {
		fmt.Fprintf(os.Stderr, "find test binary: %v\n", err)
		return 1
	}
	if p, err := exec.LookPath("busybox"); err == nil {
		busybox = p
	}

	// The runtime creates its epoll descriptor and wake-up eventfd on first
	// use of the poller; do that now so fd counts of this process taken in
	// tests do not change because of it.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	return m.Run()
}
