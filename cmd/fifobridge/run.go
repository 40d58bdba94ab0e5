//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/fifobridge/fifobridge/bridge"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/internal/procinit"
	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/fifobridge/fifobridge/turn"
)

// errNoProgram is run's error without PROGRAM. In a container the
// image's entrypoint is "fifobridge run --", so the hint names the place
// a docker run takes it.
var errNoProgram = errors.New("no PROGRAM given: put it after --, as in fifobridge run [flags] -- PROGRAM [ARG...]; in a container, after the image name, as in docker run IMAGE my-cli")

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
	cfg, codes, err := runConfig(args)
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
		return codes.apply(startErr.Code())
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
	if cfg.Mode == "exec" {
		children = cfg.MaxConcurrent
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
	f := defineRunFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fmt.Println("usage: fifobridge run [flags] -- PROGRAM [ARG...]")
			fs.PrintDefaults()
		}
		return nil, nil, err
	}
	if err := f.check(fs.NArg()); err != nil {
		return nil, nil, err
	}
	// The log may go to the terminal a child has the foreground of.
	log, err := newLogger(tty.Output(os.Stderr), *f.logFormat, *f.logLevel)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := f.config(log)
	if err != nil {
		return nil, nil, err
	}
	cfg.Program, cfg.Args = fs.Arg(0), fs.Args()[1:]
	if cfg.ReplySweep, err = testReplySweep(); err != nil {
		return nil, nil, err
	}
	if err := absolutePaths(cfg); err != nil {
		return nil, nil, err
	}
	return cfg, f.codes, nil
}

// runFlags are the flags of `run`, as defineRunFlags defined them.
type runFlags struct {
	dir, in, out, statusPath          *string
	create                            *bool
	perm                              modeFlag
	mode, restart, stopSignal, cgroup *string
	maxRestarts, concurrent           *int
	window, backoffMin, backoffMax    *time.Duration
	stopTimeout, timeout, idleTimeout *time.Duration
	settle                            *time.Duration
	maxRequest                        sizeFlag
	allowArgs, tty, tee               *bool
	logFormat, logLevel, runAs        *string
	ttySize, prompt, stderr           *string
	continuation                      *string
	codes                             exitMap
}

// defineRunFlags defines the flags of `run` on fs.
func defineRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{perm: modeFlag(0o660), maxRequest: sizeFlag(1 << 20)}
	f.dir = fs.String("dir", "/run/fifobridge", "directory of the FIFOs, the status file and replies/")
	f.in = fs.String("in", "", "input FIFO path (default DIR/in)")
	f.out = fs.String("out", "", "output FIFO path (default DIR/out)")
	f.create = fs.Bool("create", true, "create the directory and missing FIFOs, remove on exit those created; false: wait until both exist")
	fs.Var(&f.perm, "perm", "who may use the FIFOs it creates: write the input FIFOs, read the output FIFO (0660: in 0620, out 0640)")
	f.mode = fs.String("mode", "stream", "stream: one long-lived child; exec: one child per request")
	f.restart = fs.String("restart", "on-failure", "stream mode: never, on-failure or always")
	f.maxRestarts = fs.Int("max-restarts", 5, "give up after this many restarts inside -restart-window (negative: never give up)")
	f.window = fs.Duration("restart-window", 60*time.Second, "window for -max-restarts; a child that ran longer resets the backoff")
	f.backoffMin = fs.Duration("backoff-min", 100*time.Millisecond, "first restart delay")
	f.backoffMax = fs.Duration("backoff-max", 30*time.Second, "largest restart delay")
	f.stopSignal = fs.String("stop-signal", "", "signal that asks a child to stop (default TERM; HUP with -tty or -prompt)")
	f.stopTimeout = fs.Duration("stop-timeout", 10*time.Second, "time from the stop signal to SIGKILL")
	f.cgroup = fs.String("cgroup", "auto", "auto, off, or a cgroup v2 directory: each child gets its own cgroup there")
	f.timeout = fs.Duration("timeout", 0, "exec mode: default per-request limit (0: none)")
	f.concurrent = fs.Int("max-concurrent", 4, "exec mode: children running at once")
	fs.Var(&f.maxRequest, "max-request", "largest request line accepted")
	f.allowArgs = fs.Bool("allow-args", false, "exec mode: let requests append args to PROGRAM's argv")
	f.statusPath = fs.String("status", "", "status file (default DIR/status.json)")
	f.logFormat = fs.String("log-format", "text", "text or json")
	f.logLevel = fs.String("log-level", "info", "debug, info, warn or error")
	f.runAs = fs.String("user", "", "run children as UID[:GID] (numbers or names), no supplementary groups; the agent stays root")
	// Terminal mode.
	f.tty = fs.Bool("tty", false, "stream mode: run the child on a new pseudo-terminal")
	f.ttySize = fs.String("tty-size", "80x24", "window size COLSxROWS of -tty's terminal at start (DIR/winsize changes it)")
	// The host side: idle exit, exit code mapping, the container log.
	f.idleTimeout = fs.Duration("idle-timeout", 0, "stop as on TERM after this long with no input byte (stream) or no request queued or running (exec); 0: never")
	fs.Var(&f.codes, "exit-map", "FROM=TO[,FROM=TO...]: exit with TO where the code would be FROM (e.g. 143=0)")
	f.tee = fs.Bool("tee", false, "stream mode: also copy the child's output to the agent's stdout, dropping what stdout cannot take")
	f.prompt = fs.String("prompt", "", "stream mode: the child's prompt, a regular expression; serves DIR/ask, one turn at a time")
	f.stderr = fs.String("stderr", "log", "plain stream mode: log (the child's stderr is the agent's) or out (the same pipe as its stdout)")
	f.continuation = fs.String("continuation", "", "with -prompt: the child's continuation prompt (a regular expression): after the whole input it ends the turn as incomplete")
	f.settle = fs.Duration("settle", turn.DefaultSettle, "with -prompt: how long the output stays quiet after a prompt before the child counts as ready (0: at once)")
	return f
}

// check refuses flags that contradict each other or are out of range;
// args is how many arguments followed the flags.
func (f *runFlags) check(args int) error {
	mode := *f.mode
	switch {
	case mode != "stream" && mode != "exec":
		return fmt.Errorf("invalid -mode %q: want stream or exec", mode)
	case *f.tty && mode == "exec":
		return fmt.Errorf("invalid -tty: a terminal is for stream mode, not -mode exec")
	case *f.window <= 0, *f.backoffMin <= 0, *f.backoffMax < *f.backoffMin:
		return fmt.Errorf("invalid restart timing: want -restart-window > 0 and 0 < -backoff-min <= -backoff-max")
	case *f.stopTimeout < 0, *f.timeout < 0, *f.idleTimeout < 0:
		return fmt.Errorf("invalid duration: -stop-timeout, -timeout and -idle-timeout must not be negative")
	case *f.tee && mode != "stream":
		return fmt.Errorf("invalid -tee: it copies a stream child's output, and -mode is %s", mode)
	case *f.stderr != "log" && *f.stderr != "out":
		return fmt.Errorf("invalid -stderr %q: want log or out", *f.stderr)
	case *f.stderr == "out" && mode != "stream":
		return fmt.Errorf("invalid -stderr out: it joins a stream child's stderr to its stdout, and -mode is %s (exec frames carry stderr apart)", mode)
	case *f.concurrent < 1:
		return fmt.Errorf("invalid -max-concurrent %d: want at least 1", *f.concurrent)
	case *f.prompt != "" && mode != "stream":
		return fmt.Errorf("invalid -prompt: conversations are for stream mode, and -mode is %s", mode)
	case *f.continuation != "" && *f.prompt == "":
		return fmt.Errorf("invalid -continuation: it is the continuation of -prompt's prompt, and -prompt is not given")
	case *f.settle < 0:
		return fmt.Errorf("invalid -settle %v: want 0 (at once) or more", *f.settle)
	case args == 0:
		return errNoProgram
	}
	return nil
}

// config is the agent's configuration as the checked flags say, less
// PROGRAM and its arguments.
func (f *runFlags) config(log *slog.Logger) (*bridge.Config, error) {
	dir := *f.dir
	cfg := &bridge.Config{
		Dir:           dir,
		In:            orDefault(*f.in, filepath.Join(dir, "in")),
		Out:           orDefault(*f.out, filepath.Join(dir, "out")),
		StatusPath:    orDefault(*f.statusPath, filepath.Join(dir, "status.json")),
		Create:        *f.create,
		Perm:          os.FileMode(f.perm),
		Mode:          *f.mode,
		MaxRestarts:   *f.maxRestarts,
		RestartWindow: *f.window,
		BackoffMin:    *f.backoffMin,
		BackoffMax:    *f.backoffMax,
		StopTimeout:   *f.stopTimeout,
		Cgroup:        *f.cgroup,
		Timeout:       *f.timeout,
		MaxConcurrent: *f.concurrent,
		MaxRequest:    int(f.maxRequest),
		AllowArgs:     *f.allowArgs,
		IdleTimeout:   *f.idleTimeout,
		Tee:           *f.tee,
		Tty:           *f.tty,
		StderrOut:     *f.stderr == "out",
		Log:           log,
	}
	var err error
	if cfg.Restart, err = child.ParsePolicy(*f.restart); err != nil {
		return nil, fmt.Errorf("invalid -restart: %w", err)
	}
	if *f.runAs != "" {
		if cfg.Credential, err = child.ParseUser(*f.runAs); err != nil {
			return nil, fmt.Errorf("invalid -user: %w", err)
		}
	}
	if cfg.StopSignal, err = child.ParseSignal(stopSignalOr(*f.stopSignal, *f.tty || *f.prompt != "")); err != nil {
		return nil, fmt.Errorf("invalid -stop-signal: %w", err)
	}
	if cfg.TtySize, err = tty.ParseWinsize(*f.ttySize); err != nil {
		return nil, fmt.Errorf("invalid -tty-size: %w", err)
	}
	if err := f.conversation(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// conversation sets cfg's conversation (-prompt, -continuation, -settle)
// as the checked flags say.
func (f *runFlags) conversation(cfg *bridge.Config) error {
	if *f.prompt == "" {
		return nil
	}
	var err error
	if cfg.Prompt, err = regexp.Compile(*f.prompt); err != nil {
		return fmt.Errorf("invalid -prompt: %w", err)
	}
	if *f.continuation != "" {
		if cfg.Continuation, err = regexp.Compile(*f.continuation); err != nil {
			return fmt.Errorf("invalid -continuation: %w", err)
		}
	}
	cfg.Settle = *f.settle
	if cfg.Settle == 0 {
		cfg.Settle = turn.SettleAtOnce
	}
	return nil
}

// stopSignalOr is -stop-signal's value, or its default: HUP for an
// interactive child, one on a terminal or in a conversation (interactive
// shells ignore TERM, on pipes too, and a hangup is what a terminal's
// session gets when it goes), TERM otherwise.
func stopSignalOr(flagValue string, interactive bool) string {
	switch {
	case flagValue != "":
		return flagValue
	case interactive:
		return "HUP"
	}
	return "TERM"
}

// absolutePaths makes every path of cfg absolute and records the start
// directory as the children's, so that the agent may leave it (see
// procinit.LeaveWorkDir).
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
