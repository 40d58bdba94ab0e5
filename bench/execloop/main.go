//go:build linux

// Command execloop is what a user might write instead of fifobridge's
// exec mode, as fifobench's baseline for requests per second: it reads
// lines from a FIFO and, for each, runs PROGRAM with os/exec in a
// goroutine of its own, then writes "exit CODE\n" into the FIFO the line
// names (the sender's reply FIFO) and closes it. Nothing else: no limit on
// how many run at once, no output, no time limit, no stop sequence. It
// runs until a signal ends it.
//
//	execloop IN PROGRAM [ARG...]
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: execloop IN PROGRAM [ARG...]")
		os.Exit(2)
	}
	// Read-write: no EOF when senders come and go.
	in, err := os.OpenFile(os.Args[1], os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "execloop:", err)
		os.Exit(1)
	}
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		go run(lines.Text(), os.Args[2], os.Args[3:])
	}
	fmt.Fprintln(os.Stderr, "execloop: read:", lines.Err())
	os.Exit(1)
}

// run runs program and writes its exit code into the FIFO reply.
func run(reply, program string, args []string) {
	code := 0
	if err := exec.Command(program, args...).Run(); err != nil {
		code = -1
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		}
	}
	f, err := os.OpenFile(reply, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "execloop:", err)
		return
	}
	fmt.Fprintf(f, "exit %d\n", code)
	f.Close()
}
