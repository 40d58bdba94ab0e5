package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
)

// The stream contenders: each bridges DIR/in and DIR/out to a cat child, or
// is cat itself.
const (
	direct = "direct cat" // cat <>in >out: the physical baseline, no bridge
	socat  = "socat"      // socat OPEN:in,rdwr!!OPEN:out,wronly EXEC:cat
	bridge = "fifobridge" // fifobridge run -- cat
)

var relays = []string{direct, socat, bridge}

// relay is a running contender and its FIFOs.
type relay struct {
	name    string
	in, out string
	cmd     *exec.Cmd
	held    []*os.File // the FIFOs, held so their buffer size sticks
}

// startRelay starts contender name on fresh FIFOs. The input FIFO is held
// read-write by every contender (cat through <>, socat through rdwr), so
// that none of them sees EOF when a writer leaves.
func startRelay(cfg *config, name string, extra ...string) *relay {
	dir, err := os.MkdirTemp(cfg.work, "relay-")
	check(err)
	r := &relay{name: name, in: filepath.Join(dir, "in"), out: filepath.Join(dir, "out")}
	// Every contender gets FIFOs with the 1 MiB buffers fifobridge asks
	// for, so that the comparison is of the relays, not of buffer sizes.
	// A FIFO's buffer lives while it is open: the harness holds it.
	for _, p := range []string{r.in, r.out} {
		check(syscall.Mkfifo(p, 0o600))
		f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NONBLOCK, 0)
		check(err)
		fifo.Grow(f)
		r.held = append(r.held, f)
	}
	switch name {
	case direct:
		r.cmd = exec.Command("sh", "-c", `exec cat <>"$1" >"$2"`, "sh", r.in, r.out)
	case socat:
		r.cmd = exec.Command("socat", "-b", "131072", "OPEN:"+r.in+",rdwr!!OPEN:"+r.out+",wronly", "EXEC:cat")
	case bridge:
		args := append([]string{"run", "-dir", dir, "-log-level", "error"}, extra...)
		r.cmd = exec.Command(cfg.bin, append(args, "--", "cat")...)
		r.cmd.Env = append(os.Environ(), cfg.env...)
	}
	r.cmd.Stderr = os.Stderr
	check(r.cmd.Start())
	return r
}

// open opens the output FIFO for reading and, unless fresh writers are
// wanted, the input FIFO for writing; both give up after a few seconds.
func (r *relay) open(writer bool) (in, out *os.File) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		out, err = openReader(ctx, r.out)
		check(err)
	}()
	if writer {
		var err error
		in, err = openWriter(ctx, r.in)
		check(err)
	}
	<-done
	return in, out
}

func (r *relay) stop() {
	r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
	for _, f := range r.held {
		f.Close()
	}
	os.RemoveAll(filepath.Dir(r.in))
}

// rss is the resident set size of pid in KiB.
func rss(pid int) int {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	return statusField(string(b), "VmRSS:")
}
