//go:build linux

package test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helpers are the child programs the test binary can become, selected by
// FIFOBRIDGE_TEST_HELPER (like os/exec's helperCommand). Each gets the
// arguments after the program name and returns its exit code.
var helpers = map[string]func(args []string) int{
	"exit":       helperExit,
	"killself":   helperKillSelf,
	"ignoreterm": helperIgnoreTerm,
	"signals":    helperSignals,
	"orphans":    helperOrphans,
	"cat":        helperCat,
	"lines":      helperLines,
	"fds":        helperFDs,
	"record":     helperRecord,
	"sleep":      helperSleep,
	"parts":      helperParts,
	"flock":      helperFlock,

	"runc-norlimits": helperRuncNoRlimits,
}

func runHelper(name string, args []string) int {
	h, ok := helpers[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
		return 2
	}
	return h(args)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper: bad number %q\n", s)
		os.Exit(2)
	}
	return n
}

// exit N: exit with code N.
func helperExit(args []string) int { return atoi(args[0]) }

// killself SIG: kill itself with signal number SIG (the runtime re-raises
// uncaught TERM with the default action, so the process dies of it).
func helperKillSelf(args []string) int {
	syscall.Kill(os.Getpid(), syscall.Signal(atoi(args[0])))
	time.Sleep(time.Minute)
	return 3
}

// ignoreterm: ignore SIGTERM, say "ready" and sleep.
func helperIgnoreTerm([]string) int {
	signal.Ignore(syscall.SIGTERM)
	fmt.Println("ready")
	for {
		time.Sleep(time.Hour)
	}
}

// sleep: say "ready" and sleep until killed.
func helperSleep([]string) int {
	fmt.Println("ready")
	for {
		time.Sleep(time.Hour)
	}
}

// parts PART...: write each PART on stdout, a pipe, the next only once the
// reader has taken all of the one before; exit 0.
func helperParts(args []string) int {
	for _, part := range args {
		if _, err := os.Stdout.WriteString(part); err != nil {
			fmt.Fprintf(os.Stderr, "parts: %v\n", err)
			return 2
		}
		for {
			n, err := unix.IoctlGetInt(1, unix.TIOCINQ) // FIONREAD
			if err != nil {
				fmt.Fprintf(os.Stderr, "parts: FIONREAD: %v\n", err)
				return 2
			}
			if n == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	return 0
}

// signals: print the name of every HUP, QUIT, USR1, USR2, WINCH and TERM it
// receives, one per line; exit 0 on TERM.
func helperSignals([]string) int {
	names := map[os.Signal]string{
		syscall.SIGHUP: "HUP", syscall.SIGQUIT: "QUIT", syscall.SIGUSR1: "USR1",
		syscall.SIGUSR2: "USR2", syscall.SIGWINCH: "WINCH", syscall.SIGTERM: "TERM",
	}
	c := make(chan os.Signal, 16)
	for s := range names {
		signal.Notify(c, s)
	}
	fmt.Println("ready")
	for s := range c {
		fmt.Println(names[s])
		if s == syscall.SIGTERM {
			return 0
		}
	}
	return 1
}

// orphans N CODE SLEEP: start N processes that outlive it (each runs
// "sleep SLEEP", or "true" when SLEEP is 0), without waiting for them, then
// exit with CODE at once.
func helperOrphans(args []string) int {
	n, code, sleep := atoi(args[0]), atoi(args[1]), args[2]
	argv := []string{"sleep", sleep}
	if sleep == "0" {
		argv = []string{"true"}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "orphans: %v\n", err)
		return 2
	}
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}}
	for i := 0; i < n; i++ {
		if _, err := syscall.ForkExec(path, argv, attr); err != nil {
			fmt.Fprintf(os.Stderr, "orphans: fork %d: %v\n", i, err)
			return 2
		}
	}
	return code
}

// cat: copy stdin to stdout; exit 0 at EOF.
func helperCat([]string) int {
	if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "cat: %v\n", err)
		return 1
	}
	return 0
}

// lines: say "ready", then echo every input line; "exit" exits 0, "fail"
// exits 1, EOF exits 4 (a child must never see EOF because a writer left).
func helperLines([]string) int {
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "exit":
			return 0
		case "fail":
			return 1
		}
		fmt.Println(sc.Text())
	}
	return 4
}

// fds REPORT MODE: list its own open descriptors (without the one used to
// read /proc/self/fd, and before opening anything else), append the listing
// and a "--" line to REPORT, then exit 0 (MODE "exit") or behave like
// "lines" (MODE "serve").
func helperFDs(args []string) int {
	listing, err := openFDs()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fds: %v\n", err)
		return 2
	}
	f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fds: %v\n", err)
		return 2
	}
	_, err = f.WriteString(listing + "--\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fds: %v\n", err)
		return 2
	}
	if args[1] == "serve" {
		return helperLines(nil)
	}
	return 0
}

// openFDs lists /proc/self/fd with raw system calls, so that nothing but the
// directory descriptor itself is opened while listing: one "FD TARGET" line
// per descriptor.
func openFDs() (string, error) {
	dir, err := syscall.Open("/proc/self/fd", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open /proc/self/fd: %w", err)
	}
	defer syscall.Close(dir)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := syscall.ReadDirent(dir, buf)
		if err != nil {
			return "", fmt.Errorf("read /proc/self/fd: %w", err)
		}
		if n <= 0 {
			break
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
	var b bytes.Buffer
	for _, name := range names {
		if name == strconv.Itoa(dir) {
			continue
		}
		target := make([]byte, 4096)
		n, err := syscall.Readlink("/proc/self/fd/"+name, target)
		if err != nil {
			n = copy(target, "?"+err.Error())
		}
		fmt.Fprintf(&b, "%s %s\n", name, strings.TrimSpace(string(target[:n])))
	}
	return b.String(), nil
}

// record FILE BASE: append the current time (Unix nanoseconds) as one line
// to FILE and exit with BASE plus the number of lines FILE had before.
func helperRecord(args []string) int {
	old, err := os.ReadFile(args[0])
	if err != nil && !os.IsNotExist(err) {
		fmt.Fprintf(os.Stderr, "record: %v\n", err)
		return 2
	}
	f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "record: %v\n", err)
		return 2
	}
	fmt.Fprintf(f, "%d\n", time.Now().UnixNano())
	f.Close()
	return atoi(args[1]) + bytes.Count(old, []byte("\n"))
}
