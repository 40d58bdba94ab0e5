package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fifobridge/fifobridge/status"
)

// health is `fifobridge health [-dir DIR] [-status FILE]`: exit 0 when the
// agent is healthy, else 1 with the reason on stderr. Of the environment it
// reads only FIFOBRIDGE_DIR and FIFOBRIDGE_STATUS, the two that name the file
// run writes.
func health(args []string) int {
	fs := flag.NewFlagSet("fifobridge health", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "/run/fifobridge", "directory of the agent's FIFOs and status file")
	statusPath := fs.String("status", "", "status file (default DIR/status.json)")
	if err := parseFlagsOnly(fs, args, "dir", "status"); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Println("usage: fifobridge health [-dir DIR] [-status FILE]")
			return 0
		}
		fmt.Fprintf(os.Stderr, "fifobridge health: %v\n", err)
		return exitUsage
	}
	path := orDefault(*statusPath, filepath.Join(*dir, "status.json"))
	if err := status.Check(path, time.Now()); err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge health: unhealthy: %v\n", err)
		return 1
	}
	return 0
}
