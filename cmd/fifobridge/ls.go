//go:build linux

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fifobridge/fifobridge/client"
	"github.com/fifobridge/fifobridge/status"
)

const lsUsage = "usage: fifobridge ls [-dir DIR] [-timeout 30s] [-json]"

// ls is `fifobridge ls [-dir DIR] [-timeout 30s] [-json]`: one line per
// open session, by name (NAME PID STATE AGE RESTARTS TURN, TURN "-"
// without a prompt), or with -json the sessions array as the agent wrote
// it. No header line: each line is a session. Of the environment it reads
// only FIFOBRIDGE_DIR.
func ls(cmdline []string) int {
	fs := flag.NewFlagSet("fifobridge ls", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "/run/fifobridge", "directory of the agent's FIFOs")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long (0: never)")
	asJSON := fs.Bool("json", false, "print the status file's sessions array")
	if code, ok := parseHostFlags(fs, cmdline, lsUsage, "dir"); !ok {
		return code
	}
	if fs.NArg() != 0 || *timeout < 0 {
		fmt.Fprintf(os.Stderr, "fifobridge ls: takes no arguments, and -timeout must not be negative\n%s\n", lsUsage)
		return exitBridge
	}
	ctx, stop := hostContext(*timeout)
	defer stop()
	list, raw, err := client.Sessions{Dir: *dir, Warn: warnAs("ls")}.List(ctx)
	if code, ok := clientErrorExit(ctx, "ls", err, *timeout, ""); ok {
		return code
	}
	out := string(raw) + "\n"
	if !*asJSON {
		out = formatSessions(list, time.Now())
	}
	// A stdout that takes nothing keeps ls no longer than a signal or
	// its -timeout.
	sayTo(ctx, os.Stdout, out)
	if code, ok := clientErrorExit(ctx, "ls", ctx.Err(), *timeout, ""); ok {
		return code
	}
	return 0
}

// formatSessions is ls's text: one line per session, sorted by name, in
// aligned columns NAME PID STATE AGE RESTARTS TURN.
func formatSessions(list []status.Brief, now time.Time) string {
	list = slices.Clone(list)
	slices.SortFunc(list, func(a, b status.Brief) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, s := range list {
		turn := "-"
		if s.Turn != "" {
			turn = s.Turn
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%d\t%s\n", s.Name, s.PID, s.State, age(now.Sub(s.StartedAt)), s.Restarts, turn)
	}
	w.Flush()
	return b.String()
}

// age is a session's age as a person reads it: 45s, 3m2s, 2h5m, 3d4h.
func age(d time.Duration) string {
	d = max(d, 0).Truncate(time.Second)
	switch {
	case d < time.Minute:
		return d.String()
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%dd%dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}
