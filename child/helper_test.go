//go:build linux

package child

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"github.com/fifobridge/fifobridge/internal/procinit"
	"github.com/fifobridge/fifobridge/internal/testlog"
)

// testReaper is the one Reaper of the test process: it owns wait4, so no
// test here may use exec.Cmd.Wait.
var testReaper *Reaper

// testLogs holds what testReaper logs (warnings and above), which also
// goes to stderr.
var testLogs = &testlog.Buffer{}

func TestMain(m *testing.M) {
	if name := os.Getenv("CHILD_TEST_HELPER"); name != "" {
		runHelper(name, os.Args[1:])
		return
	}
	// As the agent does first thing: what the test binary inherited is
	// close-on-exec.
	if _, err := procinit.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	logs := io.MultiWriter(os.Stderr, testLogs)
	testReaper = NewReaper(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	code := m.Run()
	testReaper.Close()
	os.Exit(code)
}

// helperSpec starts the test binary as the named helper, marked with mark
// in its environment so that it and everything it starts can be found.
func helperSpec(t *testing.T, mark, name string, args ...string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Program: exe,
		Args:    args,
		Env:     []string{"CHILD_TEST_HELPER=" + name, "CHILD_TEST_MARK=" + mark},
		Stdin:   devNull(t),
		Stdout:  devNull(t),
		Stderr:  os.Stderr,
	}
}

func devNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// marked lists the live processes whose environment holds mark.
func marked(mark string) []int {
	var pids []int
	for _, p := range procfs.Processes() {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.PID))
		if err == nil && bytes.Contains(env, []byte("CHILD_TEST_MARK="+mark+"\x00")) {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// zombies lists processes in state Z whose parent is this test process.
func zombies() []int {
	var pids []int
	d, _ := os.ReadDir("/proc")
	for _, e := range d {
		if p, ok := procfs.Stat(e.Name()); ok && p.State == 'Z' && p.PPID == os.Getpid() {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// checkGone fails the test if a marked process or a zombie child is left.
func checkGone(t *testing.T, mark string) {
	t.Helper()
	// A bound, not a pause: what is left is looked for every 20 ms. It is
	// generous because a -race build of this binary, which the helpers
	// are, can take seconds to start on a slow machine.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && (len(marked(mark)) > 0 || len(zombies()) > 0) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := marked(mark); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
	if z := zombies(); len(z) > 0 {
		t.Errorf("zombies left: %v", z)
	}
}

// runHelper is the body of a helper process.
func runHelper(name string, args []string) {
	switch name {
	case "exit":
		n, _ := strconv.Atoi(args[0])
		os.Exit(n)
	case "kill":
		sig, _ := ParseSignal(args[0])
		syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Minute)
	case "sleep":
		time.Sleep(time.Minute)
	case "haschildren": // prints hasChildren with none, one running, one a zombie, none again
		say := func() { fmt.Println(hasChildren()) }
		say()
		self, _ := os.Executable()
		c := exec.Command(self)
		c.Env = append(os.Environ(), "CHILD_TEST_HELPER=sleep")
		c.Start()
		say()
		c.Process.Kill()
		for q, _ := procfs.Stat(strconv.Itoa(c.Process.Pid)); q.State != 'Z'; q, _ = procfs.Stat(strconv.Itoa(c.Process.Pid)) {
			time.Sleep(time.Millisecond)
		}
		say()
		c.Wait()
		say()
	case "ignoreterm": // says "ready" once TERM is ignored
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(time.Minute)
	case "tree": // sleepers in the group, one in its own session; then exit or stay
		self, _ := os.Executable()
		for i := 0; i < 3; i++ {
			c := exec.Command(self)
			c.Env = append(os.Environ(), "CHILD_TEST_HELPER=ignoreterm")
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: i == 2}
			c.Start()
		}
		if args[0] == "stay" {
			time.Sleep(time.Minute)
		}
	case "orphans": // N processes that exit at the same moment as this one
		n, _ := strconv.Atoi(args[0])
		self, _ := os.Executable()
		at := time.Now().Add(200 * time.Millisecond)
		for i := 0; i < n; i++ {
			c := exec.Command(self, strconv.FormatInt(at.UnixNano(), 10))
			c.Env = append(os.Environ(), "CHILD_TEST_HELPER=exitat")
			c.Start()
		}
		time.Sleep(time.Until(at))
		code, _ := strconv.Atoi(args[1])
		os.Exit(code)
	case "exitat":
		ns, _ := strconv.ParseInt(args[0], 10, 64)
		time.Sleep(time.Until(time.Unix(0, ns)))
		os.Exit(0)
	default:
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
		os.Exit(2)
	}
}
