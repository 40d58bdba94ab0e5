// Command fifobench measures fifobridge against what a user would otherwise
// run, side by side in one run: a direct relay (cat <>in >out, no bridge at
// all), socat bridging the FIFOs to EXEC:cat, and for the init part tini,
// dumb-init and the bare program. Contenders alternate within every round,
// and the table reports medians over the rounds.
//
//	go run ./cmd/fifobench [-rounds 5] [-size 64] [-out docs]
//
// It prints a Markdown table and writes docs/bench.md and docs/bench.svg.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type config struct {
	bin     string // the fifobridge binary under test
	rounds  int
	sizeMiB int
	pings   int // round trips per latency round
	execN   int // requests per exec round
	spawns  int // runs per wrapper round
	work    string
	env     []string // extra environment for fifobridge
}

func main() {
	var cfg config
	out := flag.String("out", "docs", "directory for bench.md and bench.svg (\"\" for none)")
	flag.StringVar(&cfg.bin, "bin", "", "fifobridge binary (default: build ./cmd/fifobridge)")
	flag.IntVar(&cfg.rounds, "rounds", 5, "rounds; every contender runs once per round")
	flag.IntVar(&cfg.sizeMiB, "size", 64, "MiB streamed per throughput run")
	flag.IntVar(&cfg.pings, "pings", 2000, "round trips per latency run")
	flag.IntVar(&cfg.execN, "requests", 1000, "requests per exec-mode run")
	flag.IntVar(&cfg.spawns, "spawns", 100, "starts per PID-1 wrapper run")
	env := flag.String("env", "", "extra environment for fifobridge, as K=V[,K=V]")
	only := flag.String("only", "stream,latency,exec,wrapper,resource", "which parts to run, comma-separated")
	flag.Parse()
	parts := map[string]func(*config, *results){
		"stream": streamRound, "latency": latencyRound, "exec": execRound,
		"wrapper": wrapperRound, "resource": resourceRound,
	}

	if *env != "" {
		cfg.env = strings.Split(*env, ",")
	}
	work, err := os.MkdirTemp("", "fifobench-")
	check(err)
	defer os.RemoveAll(work)
	cfg.work = work
	if cfg.bin == "" {
		cfg.bin = filepath.Join(work, "fifobridge")
		build := exec.Command("go", "build", "-o", cfg.bin, "./cmd/fifobridge")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stderr = os.Stderr
		check(build.Run())
	}
	for _, tool := range []string{"socat", "tini", "dumb-init", "true", "cat", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			fatalf("%s is needed (Debian: apt-get install socat tini dumb-init)", tool)
		}
	}

	r := newResults()
	for round := 1; round <= cfg.rounds; round++ {
		fmt.Fprintf(os.Stderr, "round %d/%d\n", round, cfg.rounds)
		for _, part := range strings.Split(*only, ",") {
			run, ok := parts[part]
			if !ok {
				fatalf("unknown part %q in -only", part)
			}
			run(&cfg, r)
		}
	}

	table := r.table()
	machine := machineLine()
	fmt.Println(machine)
	fmt.Println()
	fmt.Println(table)
	if *out != "" {
		check(os.MkdirAll(*out, 0o755))
		command := strings.Join(append([]string{"go run ./cmd/fifobench"}, os.Args[1:]...), " ")
		md := fmt.Sprintf("%s\n\nCommand: `%s`, %s.\n\n%s\n",
			machine, command, time.Now().UTC().Format("2006-01-02"), table)
		check(os.WriteFile(filepath.Join(*out, "bench.md"), []byte(md), 0o644))
		check(os.WriteFile(filepath.Join(*out, "bench.svg"), []byte(r.chart(machine)), 0o644))
		fmt.Fprintf(os.Stderr, "wrote %s and %s\n", filepath.Join(*out, "bench.md"), filepath.Join(*out, "bench.svg"))
	}
}

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
	return fmt.Sprintf("Machine: %d cores, %s, Linux %s, %s.", runtime.NumCPU(), model, strings.TrimSpace(string(kernel)), runtime.Version())
}

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fifobench: "+format+"\n", args...)
	os.Exit(1)
}
