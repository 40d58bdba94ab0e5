//go:build linux

// Command goinit is the least a Go init can do, as fifobench's floor for
// the start and exit of a Go agent: fork and exec its argument, wait4 for
// it, and exit with its status (128+N for signal N). Nothing else: no
// signal forwarding, no reaping of others, no flags.
//
//	goinit PROGRAM [ARG...]
package main

import (
	"os"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		os.Stderr.WriteString("usage: goinit PROGRAM [ARG...]\n")
		os.Exit(125)
	}
	path := lookPath(os.Args[1])
	pid, err := syscall.ForkExec(path, os.Args[1:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		os.Stderr.WriteString("goinit: " + path + ": " + err.Error() + "\n")
		os.Exit(127)
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
}

// lookPath finds name in $PATH as execvp(3) would, without os/exec.
func lookPath(name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	for _, dir := range strings.Split(os.Getenv("PATH"), ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if syscall.Access(p, 1) == nil { // X_OK
			return p
		}
	}
	return name
}
