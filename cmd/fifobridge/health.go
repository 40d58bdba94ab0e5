//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fifobridge/fifobridge/status"
)

// healthPoll is how often health -wait checks the status file again.
const healthPoll = 100 * time.Millisecond

// health is `fifobridge health [-dir DIR] [-status FILE] [-session NAME] [-wait D]`:
// exit 0 when the agent is healthy (with -session, and session NAME is
// open and not in a crash loop), else 1 with the reason on stderr; with
// -wait, exit 0 as soon as it is healthy within D. Of the environment it reads
// only FIFOBRIDGE_DIR and FIFOBRIDGE_STATUS, the two that name the file run
// writes.
func health(args []string) int {
	fs, dir := hostFlagSet("fifobridge health")
	statusPath := fs.String("status", "", "status file (default DIR/status.json)")
	wait := fs.Duration("wait", 0, "wait up to this long for the agent to become healthy")
	session := fs.String("session", "", "about session `NAME` of an agent run with -mode sessions")
	if err := parseFlagsOnly(fs, args, "dir", "status"); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Println("usage: fifobridge health [-dir DIR] [-status FILE] [-session NAME] [-wait 0]")
			return 0
		}
		fmt.Fprintf(os.Stderr, "fifobridge health: %v\n", err)
		return exitUsage
	}
	if *wait < 0 {
		fmt.Fprintln(os.Stderr, "fifobridge health: -wait must not be negative")
		return exitUsage
	}
	path := orDefault(*statusPath, filepath.Join(*dir, "status.json"))
	deadline := time.Now().Add(*wait)
	for {
		err := status.Check(*dir, path, *session, time.Now())
		if err == nil {
			return 0
		}
		if !time.Now().Before(deadline) {
			fmt.Fprintf(os.Stderr, "fifobridge health: unhealthy: %v\n", err)
			return 1
		}
		time.Sleep(min(healthPoll, time.Until(deadline)))
	}
}
