//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// bench is what every part of a run uses: the settings, the work
// directory, and the programs built or found for the run.
type bench struct {
	config
	work       string
	root       string            // the bench module's directory (bench/), with its C and Go helpers
	product    string            // the fifobridge module's directory, root's parent
	bin        string            // the fifobridge binary under test
	before     string            // -before's binary, absolute; "" for none
	execloop   string            // bench/execloop, execrate's baseline
	floor      string            // the C floor bridge; "" without a C compiler
	ttyFloor   string            // the C floor bridge on a terminal; "" likewise
	goinit     string            // the minimal Go init
	client     []string          // the client's argv before its arguments
	env        []string          // extra environment of the client
	clientName string            // which client, for the table
	tools      map[string]string // absolute paths of the programs found
	pexpect    bool              // python3 has pexpect (the ask part's replwrap)
	image      *dockerImage      // the docker part's, once built
	imageTag   string            // its tag and label, kept after it is removed
	containers int               // containers the docker part started
}

// optionalTools are the contenders and helpers a run goes without, with a
// note, when they are missing.
var optionalTools = []string{"socat", "tini", "dumb-init", "catatonit", "strace", "taskset", "docker", "busybox", "tini-static", "python3", "bash", "tmux"}

// setup builds and finds everything the run needs, in work.
func setup(cfg config, work string) (*bench, error) {
	b := &bench{config: cfg, work: work, tools: map[string]string{}}
	// socat, for one, does not wait for its cat when stopped: as a
	// subreaper the harness gets such orphans, and stop waits for them.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("become a child subreaper: %w", err)
	}
	var err error
	if b.root, err = benchRoot(); err != nil {
		return nil, err
	}
	b.product = filepath.Dir(b.root)
	for _, t := range append([]string{"true", "cat", "sh", "stty", "env"}, optionalTools...) {
		if p, err := exec.LookPath(t); err == nil {
			b.tools[t] = p
		}
	}
	b.resolvePython()
	b.pexpect = hasPexpect(b.tools["python3"])
	for _, t := range []string{"true", "cat", "sh", "stty", "env"} {
		if b.tools[t] == "" {
			return nil, fmt.Errorf("%s is needed and not in $PATH", t)
		}
	}
	if b.bin = cfg.bin; b.bin == "" {
		b.bin = filepath.Join(work, "fifobridge")
		if err := goBuild(b.product, "./cmd/fifobridge", b.bin); err != nil {
			return nil, err
		}
	}
	if cfg.before != "" {
		if b.before, err = filepath.Abs(cfg.before); err != nil {
			return nil, err
		}
		if _, err := os.Stat(b.before); err != nil {
			return nil, fmt.Errorf("-before: %w", err)
		}
	}
	b.goinit = filepath.Join(work, "goinit")
	if err := goBuild(b.root, "./goinit", b.goinit); err != nil {
		return nil, err
	}
	b.execloop = filepath.Join(work, "execloop")
	if err := goBuild(b.root, "./execloop", b.execloop); err != nil {
		return nil, err
	}
	return b, b.setupClient()
}

// setupClient compiles bench/client.c, bench/floor.c and bench/ttyfloor.c when a C compiler
// is there, and else makes this binary the client (see goClient).
func (b *bench) setupClient() error {
	cc := findCC()
	if cc != "" && b.clientKind != "go" {
		c := filepath.Join(b.work, "client")
		if err := b.compile(cc, "client.c", c); err != nil {
			return err
		}
		b.client = []string{c}
		b.clientName = "C client (bench/client.c)"
	}
	if cc != "" {
		b.floor = filepath.Join(b.work, "floor")
		if err := b.compile(cc, "floor.c", b.floor); err != nil {
			return err
		}
		b.ttyFloor = filepath.Join(b.work, "ttyfloor")
		if err := b.compile(cc, "ttyfloor.c", b.ttyFloor); err != nil {
			return err
		}
	}
	if b.client != nil {
		return nil
	}
	if b.clientKind == "c" {
		return errors.New("-client c: no C compiler (cc, gcc or clang, or $CC)")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary for the Go client: %w", err)
	}
	b.client = []string{self}
	b.env = []string{clientEnv + "=1", "GOMAXPROCS=1"}
	b.clientName = "Go client (raw system calls on one locked thread)"
	return nil
}

func findCC() string {
	for _, cc := range []string{os.Getenv("CC"), "cc", "gcc", "clang"} {
		if cc == "" {
			continue
		}
		if p, err := exec.LookPath(cc); err == nil {
			return p
		}
	}
	return ""
}

func (b *bench) compile(cc, src, out string) error {
	cmd := exec.Command(cc, "-O2", "-o", out, filepath.Join(b.root, src))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("compile bench/%s: %w\n%s", src, err, msg)
	}
	return nil
}

// goBuild builds the package pkg of the module in dir, statically, into
// out, with the go command in $PATH (`go run` puts its own first there).
func goBuild(dir, pkg, out string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, msg)
	}
	return nil
}

// benchRoot is the bench module's directory: the nearest directory up
// from the working directory that has client.c and a go.mod, and whose
// parent has the fifobridge module's cmd/fifobridge. From the fifobridge
// module's own directory it is its bench/.
func benchRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		for _, d := range []string{filepath.Join(dir, "bench"), dir} {
			if isBenchRoot(d) {
				return d, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run fifobench inside the fifobridge repository (no bench/client.c and bench/go.mod above the working directory)")
		}
		dir = parent
	}
}

// isBenchRoot says whether dir has client.c and go.mod, and its parent
// cmd/fifobridge.
func isBenchRoot(dir string) bool {
	for _, p := range []string{filepath.Join(dir, "client.c"), filepath.Join(dir, "go.mod"), filepath.Join(filepath.Dir(dir), "cmd", "fifobridge")} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// missing says which optional tools were not found, for the notes.
func (b *bench) missing() []string {
	var m []string
	for _, t := range optionalTools {
		if b.tools[t] == "" {
			m = append(m, t)
		}
	}
	return m
}

// resolvePython replaces the python3 found in $PATH by the interpreter it
// runs, so that a wrapper (a pyenv shim is a shell script) does not add
// its own start to every python3 -c of the ask part.
func (b *bench) resolvePython() {
	if b.tools["python3"] == "" {
		return
	}
	out, err := exec.Command(b.tools["python3"], "-c", "import sys; print(sys.executable)").Output()
	if p := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(p) {
		b.tools["python3"] = p
	}
}
