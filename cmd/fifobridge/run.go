package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/fifobridge/fifobridge/bridge"
	"github.com/fifobridge/fifobridge/child"
)

// run is `fifobridge run [flags] -- PROGRAM [ARG...]`.
func run(args []string) int {
	// Before anything is opened or started: nothing inherited reaches a child.
	if err := child.MarkInheritedCloseOnExec(); err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge: %v\n", err)
		return exitUsage
	}
	cfg, codes, err := runConfig(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge run: %v\n", err)
		return exitUsage
	}
	// Exec mode starts its program for requests that may come much later:
	// one that cannot start is the agent's end now, before it makes or
	// serves a FIFO, with the code a shell gives (127, 126). A stream
	// child's start reports the same at once.
	if startErr := lookupProgram(cfg); startErr != nil && cfg.Mode == "exec" {
		cfg.Log.Error("cannot start the program", "err", startErr)
		return codes.apply(startErr.Code())
	}

	// Signals are registered before the first child starts, and after the
	// signal state to hand on to children is read.
	// They stay registered until the process exits: a signal that comes
	// while the agent winds down is caught and dropped, never given its
	// default action (a TERM would end the agent with 143 instead of the
	// child's code), and signal.Stop would cost a hand-off to the
	// runtime's signal thread per signal, more than the rest of the exit.
	sigs, sigState, err := catchSignals()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fifobridge run: %v\n", err)
		return exitUsage
	}
	cfg.Signals = sigState
	// Threads for the worst moment, made now: under a pids limit a
	// child's fork bomb leaves none to make later (see ReserveThreads).
	children := 1
	if cfg.Mode == "exec" {
		children = cfg.MaxConcurrent
	}
	child.ReserveFor(children)
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
	child.LeaveWorkDirAfterStart()

	st, err := bridge.Run(ctx, cfg)
	var startErr *child.StartError
	switch {
	case errors.As(err, &startErr):
		cfg.Log.Error("cannot start the program", "err", err)
		return codes.apply(startErr.Code())
	case err != nil:
		cfg.Log.Error("agent failed", "err", err)
		return exitUsage // the agent's own failure: never mapped
	}
	code := codes.apply(st.Code())
	cfg.Log.Info("exiting", "code", code)
	return code
}

// runConfig reads the flags and environment of `run`, and -exit-map.
func runConfig(args []string) (*bridge.Config, exitMap, error) {
	fs := flag.NewFlagSet("fifobridge run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		dir         = fs.String("dir", "/run/fifobridge", "directory of the FIFOs, the status file and replies/")
		in          = fs.String("in", "", "input FIFO path (default DIR/in)")
		out         = fs.String("out", "", "output FIFO path (default DIR/out)")
		create      = fs.Bool("create", true, "create the directory and missing FIFOs, remove on exit those created; false: wait until both exist")
		perm        = modeFlag(0o660)
		mode        = fs.String("mode", "stream", "stream: one long-lived child; exec: one child per request")
		restart     = fs.String("restart", "on-failure", "stream mode: never, on-failure or always")
		maxRestarts = fs.Int("max-restarts", 5, "give up after this many restarts inside -restart-window (negative: never give up)")
		window      = fs.Duration("restart-window", 60*time.Second, "window for -max-restarts; a child that ran longer resets the backoff")
		backoffMin  = fs.Duration("backoff-min", 100*time.Millisecond, "first restart delay")
		backoffMax  = fs.Duration("backoff-max", 30*time.Second, "largest restart delay")
		stopSignal  = fs.String("stop-signal", "", "signal that asks a child to stop (default TERM; HUP with -tty)")
		stopTimeout = fs.Duration("stop-timeout", 10*time.Second, "time from the stop signal to SIGKILL")
		cgroup      = fs.String("cgroup", "auto", "auto, off, or a cgroup v2 directory: each child gets its own cgroup there")
		timeout     = fs.Duration("timeout", 0, "exec mode: default per-request limit (0: none)")
		concurrent  = fs.Int("max-concurrent", 4, "exec mode: children running at once")
		maxRequest  = sizeFlag(1 << 20)
		allowArgs   = fs.Bool("allow-args", false, "exec mode: let requests append args to PROGRAM's argv")
		statusPath  = fs.String("status", "", "status file (default DIR/status.json)")
		logFormat   = fs.String("log-format", "text", "text or json")
		logLevel    = fs.String("log-level", "info", "debug, info, warn or error")
		runAs       = fs.String("user", "", "run children as UID[:GID] (numbers or names), no supplementary groups; the agent stays root")
	)
	// Terminal mode.
	tty := fs.Bool("tty", false, "stream mode: run the child on a new pseudo-terminal")
	ttySize := fs.String("tty-size", "80x24", "window size COLSxROWS of -tty's terminal at start (DIR/winsize changes it)")
	fs.Var(&perm, "perm", "mode of FIFOs it creates")
	fs.Var(&maxRequest, "max-request", "largest request line accepted")
	// The host side: idle exit, exit code mapping, the container log.
	var codes exitMap
	idleTimeout := fs.Duration("idle-timeout", 0, "stop as on TERM after this long with no input byte (stream) or no request queued or running (exec); 0: never")
	fs.Var(&codes, "exit-map", "FROM=TO[,FROM=TO...]: exit with TO where the code would be FROM (e.g. 143=0)")
	tee := fs.Bool("tee", false, "stream mode: also copy the child's output to the agent's stdout, dropping what stdout cannot take")
	prompt := fs.String("prompt", "", "stream mode: the child's prompt, a regular expression; serves DIR/ask, one turn at a time")
	stderr := fs.String("stderr", "log", "plain stream mode: log (the child's stderr is the agent's) or out (the same pipe as its stdout)")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fmt.Println("usage: fifobridge run [flags] -- PROGRAM [ARG...]")
			fs.PrintDefaults()
		}
		return nil, nil, err
	}
	// The log may go to the terminal a child has the foreground of.
	log, err := newLogger(child.TerminalOutput(os.Stderr), *logFormat, *logLevel)
	if err != nil {
		return nil, nil, err
	}
	cfg := &bridge.Config{
		Dir:           *dir,
		In:            orDefault(*in, filepath.Join(*dir, "in")),
		Out:           orDefault(*out, filepath.Join(*dir, "out")),
		StatusPath:    orDefault(*statusPath, filepath.Join(*dir, "status.json")),
		Create:        *create,
		Perm:          os.FileMode(perm),
		Mode:          *mode,
		MaxRestarts:   *maxRestarts,
		RestartWindow: *window,
		BackoffMin:    *backoffMin,
		BackoffMax:    *backoffMax,
		StopTimeout:   *stopTimeout,
		Cgroup:        *cgroup,
		Timeout:       *timeout,
		MaxConcurrent: *concurrent,
		MaxRequest:    int(maxRequest),
		AllowArgs:     *allowArgs,
		IdleTimeout:   *idleTimeout,
		Tee:           *tee,
		Log:           log,
	}
	if cfg.Restart, err = child.ParsePolicy(*restart); err != nil {
		return nil, nil, fmt.Errorf("invalid -restart: %w", err)
	}
	if *runAs != "" {
		if cfg.Credential, err = child.ParseUser(*runAs); err != nil {
			return nil, nil, fmt.Errorf("invalid -user: %w", err)
		}
	}
	if cfg.StopSignal, err = child.ParseSignal(stopSignalOr(*stopSignal, *tty)); err != nil {
		return nil, nil, fmt.Errorf("invalid -stop-signal: %w", err)
	}
	if cfg.TtySize, err = child.ParseWinsize(*ttySize); err != nil {
		return nil, nil, fmt.Errorf("invalid -tty-size: %w", err)
	}
	if cfg.Tty = *tty; cfg.Tty && *mode == "exec" {
		return nil, nil, fmt.Errorf("invalid -tty: a terminal is for stream mode, not -mode exec")
	}
	switch {
	case *mode != "stream" && *mode != "exec":
		return nil, nil, fmt.Errorf("invalid -mode %q: want stream or exec", *mode)
	case *window <= 0, *backoffMin <= 0, *backoffMax < *backoffMin:
		return nil, nil, fmt.Errorf("invalid restart timing: want -restart-window > 0 and 0 < -backoff-min <= -backoff-max")
	case *stopTimeout < 0, *timeout < 0, *idleTimeout < 0:
		return nil, nil, fmt.Errorf("invalid duration: -stop-timeout, -timeout and -idle-timeout must not be negative")
	case *tee && *mode != "stream":
		return nil, nil, fmt.Errorf("invalid -tee: it copies a stream child's output, and -mode is %s", *mode)
	case *stderr != "log" && *stderr != "out":
		return nil, nil, fmt.Errorf("invalid -stderr %q: want log or out", *stderr)
	case *stderr == "out" && *mode != "stream":
		return nil, nil, fmt.Errorf("invalid -stderr out: it joins a stream child's stderr to its stdout, and -mode is %s (exec frames carry stderr apart)", *mode)
	case *concurrent < 1:
		return nil, nil, fmt.Errorf("invalid -max-concurrent %d: want at least 1", *concurrent)
	case fs.NArg() == 0:
		return nil, nil, fmt.Errorf("no PROGRAM given: fifobridge run [flags] -- PROGRAM [ARG...]")
	}
	cfg.StderrOut = *stderr == "out"
	if *prompt != "" {
		if *mode != "stream" {
			return nil, nil, fmt.Errorf("invalid -prompt: conversations are for stream mode, and -mode is %s", *mode)
		}
		if cfg.Prompt, err = regexp.Compile(*prompt); err != nil {
			return nil, nil, fmt.Errorf("invalid -prompt: %w", err)
		}
	}
	cfg.Program, cfg.Args = fs.Arg(0), fs.Args()[1:]
	if cfg.ReplySweep, err = testReplySweep(); err != nil {
		return nil, nil, err
	}
	if err := absolutePaths(cfg); err != nil {
		return nil, nil, err
	}
	return cfg, codes, nil
}

// stopSignalOr is -stop-signal's value, or its default: HUP for a terminal
// child (interactive shells ignore TERM, and a hangup is what a terminal's
// session gets when it goes), TERM otherwise.
func stopSignalOr(flagValue string, tty bool) string {
	switch {
	case flagValue != "":
		return flagValue
	case tty:
		return "HUP"
	}
	return "TERM"
}

// absolutePaths makes every path of cfg absolute and records the start
// directory as the children's, so that the agent may leave it (see
// child.LeaveWorkDirAfterStart).
func absolutePaths(cfg *bridge.Config) error {
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("read working directory: %w", err)
	}
	cfg.WorkDir = wd
	for _, p := range []*string{&cfg.Dir, &cfg.In, &cfg.Out, &cfg.StatusPath} {
		if !filepath.IsAbs(*p) {
			*p = filepath.Join(wd, *p)
		}
	}
	return nil
}

// lookupProgram looks PROGRAM up on PATH, once, at start, where a relative
// name means what it says, and sets cfg.ProgramPath (absolute). It returns
// why it cannot be started when it is missing (Code 127) or not executable
// (126); cfg.ProgramPath then stays empty, and each start looks it up again
// to report its error.
func lookupProgram(cfg *bridge.Config) *child.StartError {
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
