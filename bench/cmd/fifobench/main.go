//go:build linux

// Command fifobench measures fifobridge against what a user would otherwise
// run, as a user's script sees it, side by side in one run.
//
//	cd bench && go run ./cmd/fifobench [-rounds 5] [-only parts] [-quick] [-out DIR]
//
// It is a module of its own (bench/go.mod), so that the fifobridge
// module's go test ./... neither builds nor runs it; it measures the
// fifobridge it builds from the parent directory (../cmd/fifobridge), or
// -bin's.
//
// A single-threaded client (bench/client.c, compiled here; a Go one on a
// locked thread without a C compiler) writes a line into DIR/in with one
// blocking write and reads its echo from DIR/out. The data-path contenders
// are a direct relay (cat <>in >out), the C floor bridge (bench/floor.c:
// one thread, poll+splice), socat, fifobridge and fifobridge -tty, in two
// CPU placements: all on one CPU, and unpinned. Start and exit compare
// fifobridge with tini, dumb-init, catatonit, bare true and a minimal Go
// init (bench/goinit); exec mode with Go's exec.Command; `fifobridge ask`
// to python3 -i and a kept-open client.Asker with python3 -i on pipes (of
// a stream agent and of a session), pexpect's replwrap, `send` to an
// exec-mode cat and an exec-mode python3 -c, back to back and, for those
// that keep one REPL, spaced as an agent asks (-ask-gaps); a session's
// open, ask and close with `docker exec -it` and a shell on the harness's
// own terminal; 1 to 100 bash sessions open at
// once on one agent and on one tmux server, and a whole session's cycle
// against tmux's.
// Contenders alternate within every round, and the tables give the median
// over the rounds with the smallest and largest round. It prints Markdown and
// writes bench.md and bench.svg into -out, or into a new temporary
// directory, whose name it prints; it never overwrites a file (the
// published figures in docs/ are copied there by hand).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// config is the command line.
type config struct {
	bin           string // the fifobridge binary under test; "" to build it
	before        string // a fifobridge binary to measure alongside, as before; "" for none
	rounds        int
	only          []string
	pings         int             // round trips per latency run
	sizeMiB       int             // MiB per throughput run
	spawns        int             // starts per start-and-exit run
	requests      int             // exec-mode requests per run
	asks          int             // questions to python3 per contender and round
	askGaps       []time.Duration // the ask part's spacings: how long after an answer the next question goes
	dockerRuns    int             // docker runs and execs per contender and round
	sessionCycles int             // open-ask-close cycles per contender and round
	scaleNs       []int           // the scale part's session counts
	scaleIdle     time.Duration   // the scale part's idle measurement, at each count
	scaleTries    int             // the scale part's opens, lss, asks and closes at each count
	scaleCycles   int             // the scale part's whole cycles per contender and round
	idle          time.Duration   // each idle measurement
	stall         int             // round trips under load, once; 0 for none
	straceN       int             // round trips under strace, once; 0 for none
	clientKind    string          // auto, c or go
	cpu           int             // the CPU of the pinned placement
	out           string          // directory for bench.md and bench.svg; "" for a new temporary one
}

// perRound are the parts measured in every round, perRun those measured
// once after the rounds.
var (
	perRound = map[string]func(*bench, int, *results) error{
		"roundtrip": roundTrip, "throughput": throughput, "start": startExit, "exec": execMode,
		"execrate": execRate, "ask": askPart, "docker": dockerPart, "sessions": sessionsPart, "scale": scalePart, "idle": idle,
		"stop": stopPart,
	}
	perRun   = map[string]func(*bench, *results) error{"stall": stall, "syscalls": syscalls}
	allParts = []string{"roundtrip", "throughput", "start", "exec", "execrate", "ask", "docker", "sessions", "scale", "idle", "stop", "stall", "syscalls"}
)

func main() {
	if os.Getenv(clientEnv) == "1" {
		os.Exit(goClient(os.Args[1:]))
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fatalf("%v", err)
	}
	command := "cd bench && go run ./cmd/fifobench"
	for _, a := range os.Args[1:] {
		command += " " + shellQuote(a)
	}
	if err := run(cfg, command); err != nil {
		fatalf("%v", err)
	}
}

// run sets up in a new work directory, measures, and prints and writes
// the report.
func run(cfg config, command string) error {
	work, err := os.MkdirTemp("", "fifobench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b, err := setup(cfg, work)
	if err != nil {
		return err
	}
	r := newResults()
	if err := b.measure(r); err != nil {
		return err
	}
	return b.publish(r, command)
}

// measure runs the parts asked for: those of a round every round, then
// those of a run. It removes what the docker part made.
func (b *bench) measure(r *results) (err error) {
	defer func() {
		if derr := b.closeDocker(); err == nil {
			err = derr
		}
	}()
	for _, t := range b.missing() {
		r.note("%s: not installed; what needs it is skipped", t)
	}
	if b.floor == "" {
		r.note("no C compiler: the Go client measured, and there is no C floor")
	}
	for round := range b.rounds {
		fmt.Fprintf(os.Stderr, "round %d/%d\n", round+1, b.rounds)
		for _, part := range b.only {
			if f := perRound[part]; f != nil {
				if err := f(b, round, r); err != nil {
					return fmt.Errorf("%s: %w", part, err)
				}
			}
		}
	}
	for _, part := range b.only {
		if f := perRun[part]; f != nil {
			fmt.Fprintf(os.Stderr, "%s\n", part)
			if err := f(b, r); err != nil {
				return fmt.Errorf("%s: %w", part, err)
			}
		}
	}
	return nil
}

// publish prints the report and writes it with its chart to b.out.
func (b *bench) publish(r *results, command string) error {
	machine := machineLine()
	head := fmt.Sprintf("%s\n\nCommand: `%s` (%s, %d rounds).\n", machine, command, b.clientName, b.rounds)
	table := r.report(b.placements())
	fmt.Println(head)
	fmt.Print(table)
	dir, err := writeReport(b.out, head+"\n"+table, r.chart(machine, b.placements()))
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s and %s\n", filepath.Join(dir, "bench.md"), filepath.Join(dir, "bench.svg"))
	return nil
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fifobench: "+format+"\n", args...)
	os.Exit(1)
}
