//go:build linux

package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	fs, dir := hostFlagSet("fifobridge ls")
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
// columns NAME PID STATE AGE RESTARTS TURN, each but the last as wide as
// its widest cell and two spaces (as text/tabwriter aligns them, at a
// tenth of its cost for 100 sessions).
func formatSessions(list []status.Brief, now time.Time) string {
	list = slices.Clone(list)
	slices.SortFunc(list, func(a, b status.Brief) int { return strings.Compare(a.Name, b.Name) })
	rows := make([][6]string, len(list))
	var width [6]int
	for i, s := range list {
		turn := "-"
		if s.Turn != "" {
			turn = s.Turn
		}
		rows[i] = [6]string{s.Name, strconv.Itoa(s.PID), s.State, age(now.Sub(s.StartedAt)), strconv.Itoa(s.Restarts), turn}
		for c, cell := range rows[i] {
			width[c] = max(width[c], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for c, cell := range row {
			b.WriteString(cell)
			if c == len(row)-1 {
				break
			}
			b.WriteString(strings.Repeat(" ", width[c]+2-utf8.RuneCountInString(cell)))
		}
		b.WriteByte('\n')
	}
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
