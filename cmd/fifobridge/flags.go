//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// exitUsage is the exit code of the agent's own failures: a bad flag, a path
// that is not a FIFO, a directory that cannot be made.
const exitUsage = 125

// parseFlags parses args, then fills every flag not given on the command line
// from FIFOBRIDGE_<NAME> in the environment: the command line wins, and an
// empty variable counts as unset. It is for run, whose every flag the README
// lists as a variable.
func parseFlags(fs *flag.FlagSet, args []string) error {
	return parseFlagsEnv(fs, args, func(string) bool { return true })
}

// parseFlagsOnly is parseFlags for commands that read only some variables:
// only the flags named fill from FIFOBRIDGE_<NAME>, so that a variable set
// for run (FIFOBRIDGE_TIMEOUT in a container's environment) does not change
// send or health.
func parseFlagsOnly(fs *flag.FlagSet, args []string, names ...string) error {
	return parseFlagsEnv(fs, args, func(name string) bool { return slices.Contains(names, name) })
}

// hostFlagSet is a host command's flag set, silent (parseHostFlags
// tells its errors), with the -dir that every host command takes.
func hostFlagSet(name string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("dir", "/run/fifobridge", "directory of the agent's FIFOs and status file")
}

// parseHostFlags parses the flags of a host command (send, ask, open,
// close, ls), as parseFlagsOnly does with the variables names. With -h it
// prints usage and the flags and returns 0, false; on a bad flag one line
// and exitBridge, false; otherwise 0, true.
func parseHostFlags(fs *flag.FlagSet, args []string, usage string, names ...string) (code int, ok bool) {
	err := parseFlagsOnly(fs, args, names...)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		fmt.Println(usage)
		fs.SetOutput(os.Stdout)
		fs.PrintDefaults()
		return 0, false
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", fs.Name(), err)
	return exitBridge, false
}

func parseFlagsEnv(fs *flag.FlagSet, args []string, fromEnv func(name string) bool) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil || !fromEnv(f.Name) {
			return
		}
		name := envName(f.Name)
		// An empty variable counts as unset, as compose files often leave them.
		if v := os.Getenv(name); v != "" {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("invalid value %q for %s: %v", v, name, serr)
			}
		}
	})
	return err
}

func envName(flag string) string {
	return "FIFOBRIDGE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// stringList is a flag that may be given any number of times; it keeps
// every value, in order.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, " ") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}
