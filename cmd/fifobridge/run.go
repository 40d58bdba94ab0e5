//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fifobridge/fifobridge/bridge"
	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/procinit"
	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/fifobridge/fifobridge/internal/watch"
)

// run is `fifobridge run [flags] -- PROGRAM [ARG...]`.
func run(args []string) int {
	// Before anything is opened, registered or started: the signal state
	// children get is the one inherited, and no inherited descriptor
	// reaches a child.
	inherited, err := procinit.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge: %v\n", err)
		return exitUsage
	}
	// The one inotify instance, first of all the agent's descriptors: a
	// killed process's files are let go of from its last descriptor to
	// its first, and closing an instance that has watches makes the
	// kernel wait for a grace period, which would otherwise hold the
	// cgroup locks after it that tell the next agent this one is dead.
	// Without one, watches fall back to looking (package watch).
	watch.Start()
	cfg, err := runConfig(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge run: %v\n", err)
		return exitUsage
	}
	// Exec mode starts its program for requests that may come much later:
	// one that cannot start (missing, not executable by the child's user,
	// or a script whose #! interpreter is) is the agent's end now, before
	// it makes or serves a FIFO, with the code a shell gives (127, 126). A
	// stream child's start reports the same at once.
	if startErr := lookupProgram(cfg); startErr != nil && cfg.Mode == "exec" {
		cfg.Log.Error("cannot start the program", "err", startErr)
		return cfg.ExitMap.Apply(startErr.Code())
	}

	// Signals are registered before the first child starts, and after the
	// signal state to hand on to children was read (procinit.Start).
	// They stay registered until the process exits: a signal that comes
	// while the agent winds down is caught and dropped, never given its
	// default action (a TERM would end the agent with 143 instead of the
	// child's code), and signal.Stop would cost a hand-off to the
	// runtime's signal thread per signal, more than the rest of the exit.
	sigs := catchSignals()
	cfg.Signals = &child.SignalState{Blocked: inherited.Blocked, Ignored: inherited.Ignored, Catch: sigs}
	// Threads for the worst moment, made now: under a pids limit a
	// child's fork bomb leaves none to make later.
	children := 1
	switch cfg.Mode {
	case "exec":
		children = cfg.MaxConcurrent
	case "sessions":
		children = cfg.MaxSessions
	}
	procinit.ReserveThreads(children)
	cfg.Terminal = child.ControllingTerminal()
	forward := make(chan os.Signal, 16)
	cfg.Forward = forward
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan struct{})
	relayed := make(chan struct{})
	defer func() { close(done); <-relayed }()
	go func() {
		defer close(relayed)
		relay(sigs, forward, stop, cfg.Log, done)
	}()
	// Every path is absolute and children start in cfg.WorkDir: the
	// agent's own directory is free to go.
	procinit.LeaveWorkDir()

	st, err := bridge.Run(ctx, cfg)
	var startErr *child.StartError
	switch {
	case errors.As(err, &startErr):
		cfg.Log.Error("cannot start the program", "err", err)
		return cfg.ExitMap.Apply(startErr.Code())
	case err != nil:
		cfg.Log.Error("agent failed", "err", err)
		return exitUsage // the agent's own failure: never mapped
	}
	code := cfg.ExitMap.Apply(st.Code())
	cfg.Log.Info("exiting", "code", code)
	return code
}

// runConfig reads the flags and environment of `run` into one value,
// checked and finished (see config.Run.Finish).
func runConfig(args []string) (*config.Run, error) {
	fs := flag.NewFlagSet("fifobridge run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg := &config.Run{}
	cfg.Define(fs)
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fmt.Println("usage: fifobridge run [flags] -- PROGRAM [ARG...]")
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		cfg.Program, cfg.Args = fs.Arg(0), fs.Args()[1:]
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("read working directory: %w", err)
	}
	if err := cfg.Finish(wd); err != nil {
		return nil, err
	}
	// The log may go to the terminal a child has the foreground of.
	if cfg.Log, err = newLogger(tty.Output(os.Stderr), cfg.LogFormat, cfg.LogLevel); err != nil {
		return nil, err
	}
	if cfg.ReplySweep, err = testReplySweep(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// lookupProgram looks PROGRAM up on PATH, once, at start, where a relative
// name means what it says, and sets cfg.ProgramPath (absolute). It returns
// why it cannot be started when it is missing (Code 127) or not executable
// (126); cfg.ProgramPath then stays empty, and each start looks it up again
// to report its error. Without PROGRAM (sessions mode with -allow-args)
// there is nothing to look up.
func lookupProgram(cfg *config.Run) *child.StartError {
	if cfg.Program == "" {
		return nil // a sessions agent's opens name theirs
	}
	path, err := child.LookPath(cfg.Program, cfg.Credential)
	if err != nil {
		return &child.StartError{Program: cfg.Program, Err: err}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(cfg.WorkDir, path)
	}
	cfg.ProgramPath = path
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// replySweepEnv shortens the exec-mode sweep of reply FIFOs left behind
// (answer.SweepPeriod and SweepAge, a minute each) for tests, which cannot
// wait minutes. It is not a flag and not part of the interface.
const replySweepEnv = "FIFOBRIDGE_TEST_REPLY_SWEEP"

func testReplySweep() (time.Duration, error) {
	v := os.Getenv(replySweepEnv)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid %s %q: want a positive duration", replySweepEnv, v)
	}
	return d, nil
}
