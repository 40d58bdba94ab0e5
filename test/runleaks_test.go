//go:build linux

package test

import (
	"bytes"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// parallelTests is how many tests run at once unless go test is given
// -parallel. The black-box tests wait on their agents, children and
// timers far more than they compute, so go test's default of one at a
// time per CPU leaves a two-core machine idle most of a run. A test that
// needs the machine, or this process, to itself does not call t.Parallel
// and runs before the parallel ones, alone (it says why).
const parallelTests = 8

// defaultParallel sets -test.parallel to parallelTests unless the command
// line set it.
func defaultParallel() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(parallelTests))
	}
}

// runLeaks is what the whole run must give back: a parallel test cannot
// count this process's descriptors and goroutines for itself (checkLeaks
// with countFDs=false), since others open and close theirs meanwhile, so
// the run counts them once, around all the tests.
type runLeaks struct {
	fds     int
	fdsList string
}

// startRunLeaks notes this process's descriptors before the tests.
func startRunLeaks() runLeaks {
	return runLeaks{fds: fdCount("self"), fdsList: fdTargets("self")}
}

// check returns why the run leaked, or "": once every test has ended, this
// process has as many descriptors as before them, and no goroutine runs
// code of this package but the one calling.
func (r runLeaks) check() string {
	var fds int
	var left []string
	if eventually(5*time.Second, func() bool {
		fds, left = fdCount("self"), testGoroutines()
		return fds == r.fds && len(left) == 0
	}) {
		return ""
	}
	var b strings.Builder
	if fds != r.fds {
		fmt.Fprintf(&b, "the test process has %d open descriptors after the tests, %d before\nbefore:\n%safter:\n%s",
			fds, r.fds, r.fdsList, fdTargets("self"))
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, "%d goroutines of the tests still run after them:\n%s\n", len(left), strings.Join(left, "\n\n"))
	}
	return b.String()
}

// testGoroutines returns the stacks of the goroutines, but the calling
// one, that run code of this package.
func testGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var left []string
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i > 0 && bytes.Contains(g, []byte("github.com/fifobridge/fifobridge/test.")) {
			left = append(left, string(g))
		}
	}
	return left
}
