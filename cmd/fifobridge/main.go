//go:build linux

// Command fifobridge bridges named pipes to a supervised command-line child
// and serves as a container's init. See README.md for the interface.
package main

import (
	"fmt"
	"os"
)

const usage = `usage:
  fifobridge run    [flags] -- PROGRAM [ARG...]   the agent (container entrypoint)
  fifobridge send   [flags] [TEXT...]             send one exec-mode request
  fifobridge ask    [flags] [TEXT...]             ask a conversation (run -prompt) one turn
  fifobridge open   [flags] NAME                  open a session (run -mode sessions)
  fifobridge close  [flags] NAME... | -all        close sessions
  fifobridge type   [flags] [TEXT...]             type into a child's input (stream mode, a session)
  fifobridge signal [flags] SIGNAL                signal a child (stream mode, a session)
  fifobridge watch  [flags]                       follow a child's output (stream mode, a session)
  fifobridge ls     [flags]                       list the open sessions
  fifobridge health [flags]                       exit 0 when the agent is healthy
  fifobridge version

Run "fifobridge COMMAND -h" for the flags.
`

func main() {
	os.Exit(dispatch(os.Args[1:]))
}

func dispatch(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return run(args[1:])
	case "send":
		return send(args[1:])
	case "ask":
		return ask(args[1:])
	case "open":
		return openSession(args[1:])
	case "close":
		return closeSessions(args[1:])
	case "type":
		return typeInput(args[1:])
	case "signal":
		return signalChild(args[1:])
	case "watch":
		return watchOutput(args[1:])
	case "ls":
		return ls(args[1:])
	case "health":
		return health(args[1:])
	case "version", "-version", "--version":
		fmt.Println(versionString())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Print(usage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "fifobridge: unknown command %q\n%s", args[0], usage)
	return exitUsage
}
