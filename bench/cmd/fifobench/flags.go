//go:build linux

package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// quick are the smaller counts of -quick, for a run of well under a minute;
// a flag given on the command line wins.
var quick = map[string]string{
	"rounds": "2", "pings": "300", "size": "32", "spawns": "30",
	"requests": "100", "asks": "20", "docker-runs": "3", "sessions": "10", "idle": "2s", "stall": "5000", "strace": "300",
	"scale": "1,10", "scale-idle": "2s", "scale-tries": "3", "scale-cycles": "10",
}

func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("fifobench", flag.ContinueOnError)
	fs.StringVar(&cfg.bin, "bin", "", "fifobridge binary to measure (default: build ../cmd/fifobridge, the fifobridge module's)")
	fs.StringVar(&cfg.before, "before", "", "another fifobridge binary, measured alongside as \"before\" in the round trip, throughput, start, exec, ask (the kept-open client) and docker parts")
	fs.IntVar(&cfg.rounds, "rounds", 5, "rounds; every contender runs once per round, in a rotated order")
	only := fs.String("only", strings.Join(allParts, ","), "parts to run, comma-separated")
	fs.IntVar(&cfg.pings, "pings", 2000, "round trips per latency run")
	fs.IntVar(&cfg.sizeMiB, "size", 256, "MiB streamed per throughput run")
	fs.IntVar(&cfg.spawns, "spawns", 200, "starts per start-and-exit run")
	fs.IntVar(&cfg.requests, "requests", 500, "exec-mode requests per run (and per sender count in execrate)")
	fs.IntVar(&cfg.asks, "asks", 100, "questions print(1) to python3 per contender and round (the ask part)")
	gaps := fs.String("ask-gaps", "0,100ms", "the ask part's spacings, comma-separated: each contender asks -asks questions at each, the next one that long after the last answer (0: back to back)")
	fs.IntVar(&cfg.dockerRuns, "docker-runs", 10, "docker runs, sends and docker execs per contender and round")
	fs.IntVar(&cfg.sessionCycles, "sessions", 50, "open, ask and close cycles of a shell per contender and round (the sessions part)")
	scale := fs.String("scale", "1,10,50,100", "session counts of the scale part, comma-separated")
	fs.DurationVar(&cfg.scaleIdle, "scale-idle", 5*time.Second, "length of the scale part's idle measurement at each count")
	fs.IntVar(&cfg.scaleTries, "scale-tries", 5, "opens, lss, asks and closes at each count of the scale part (their median)")
	fs.IntVar(&cfg.scaleCycles, "scale-cycles", 20, "whole cycles of a bash session per contender and round (the scale part)")
	fs.DurationVar(&cfg.idle, "idle", 10*time.Second, "length of each idle measurement")
	fs.IntVar(&cfg.stall, "stall", 100000, "round trips under load, once per run (0: none)")
	fs.IntVar(&cfg.straceN, "strace", 2000, "round trips counted under strace, once per run (0: none)")
	fs.StringVar(&cfg.clientKind, "client", "auto", "auto, c (bench/client.c) or go (the Go fallback)")
	fs.IntVar(&cfg.cpu, "cpu", 0, "the CPU of the pinned placement")
	fs.StringVar(&cfg.out, "out", "", "directory for bench.md and bench.svg, which must not exist there yet (default: a new temporary directory)")
	isQuick := fs.Bool("quick", false, "smaller counts for a quick look: "+quickText())
	err := fs.Parse(args)
	if err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *isQuick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range quick {
			if !set[name] {
				fs.Set(name, v)
			}
		}
	}
	if cfg.scaleNs, err = parseCounts(*scale); err != nil {
		return cfg, fmt.Errorf("-scale: %w", err)
	}
	if cfg.askGaps, err = parseGaps(*gaps); err != nil {
		return cfg, fmt.Errorf("-ask-gaps: %w", err)
	}
	cfg.only = strings.Split(*only, ",")
	for _, p := range cfg.only {
		if !slices.Contains(allParts, p) {
			return cfg, fmt.Errorf("-only: unknown part %q (parts: %s)", p, strings.Join(allParts, ","))
		}
	}
	if !slices.Contains([]string{"auto", "c", "go"}, cfg.clientKind) {
		return cfg, fmt.Errorf("-client: want auto, c or go, not %q", cfg.clientKind)
	}
	if cfg.rounds < 1 || cfg.pings < 1 || cfg.sizeMiB < 1 || cfg.spawns < 1 || cfg.requests < 1 || cfg.asks < 1 || cfg.dockerRuns < 1 || cfg.sessionCycles < 1 || cfg.idle < time.Second {
		return cfg, fmt.Errorf("-rounds, -pings, -size, -spawns, -requests, -asks, -docker-runs and -sessions must be positive, -idle at least 1s")
	}
	if cfg.scaleTries < 1 || cfg.scaleCycles < 1 || cfg.scaleIdle < time.Second {
		return cfg, fmt.Errorf("-scale-tries and -scale-cycles must be positive, -scale-idle at least 1s")
	}
	return cfg, nil
}

func quickText() string {
	var s []string
	for _, name := range []string{"rounds", "pings", "size", "spawns", "requests", "asks", "docker-runs", "sessions", "scale", "scale-idle", "scale-tries", "scale-cycles", "idle", "stall", "strace"} {
		s = append(s, "-"+name+" "+quick[name])
	}
	return strings.Join(s, " ")
}

// parseCounts parses a comma-separated list of positive session counts.
func parseCounts(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("want positive counts, comma-separated, not %q", s)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// parseGaps parses a comma-separated list of spacings, 0 or Go durations
// of at most a second, each once.
func parseGaps(s string) ([]time.Duration, error) {
	var gaps []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d < 0 || d > time.Second || slices.Contains(gaps, d) {
			return nil, fmt.Errorf("want distinct durations from 0 to 1s, comma-separated, not %q", s)
		}
		gaps = append(gaps, d)
	}
	return gaps, nil
}

// machineLine says what the numbers were measured on.
func machineLine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("Machine: %s, %d cores, Linux %s, %s, %s.", model, runtime.NumCPU(),
		strings.TrimSpace(string(kernel)), runtime.Version(), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}
