//go:build linux

package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
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

// modeFlag is a file mode written in octal, like 0660.
type modeFlag os.FileMode

func (m *modeFlag) String() string { return fmt.Sprintf("%#o", os.FileMode(*m)) }

func (m *modeFlag) Set(s string) error {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || v > 0o777 {
		return fmt.Errorf("want an octal mode such as 0660")
	}
	*m = modeFlag(v)
	return nil
}

// sizeFlag is a byte count: 1048576, 64KiB, 1MiB, 1M, 2GiB; at most
// maxSize.
type sizeFlag int

// maxSize is the largest sizeFlag: 2GiB, or one byte less where an int has
// 32 bits (386, arm, mips, mipsle).
const maxSize = min(1<<31, math.MaxInt)

func (z *sizeFlag) String() string { return strconv.Itoa(int(*z)) }

func (z *sizeFlag) Set(s string) error {
	units := []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	num, mult := strings.TrimSpace(s), 1
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.Atoi(num)
	if err != nil || v <= 0 || v > maxSize/mult {
		return fmt.Errorf("want a positive size such as 1048576, 64KiB or 1MiB")
	}
	*z = sizeFlag(v * mult)
	return nil
}

// stringList is a flag that may be given any number of times; it keeps
// every value, in order.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, " ") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}
