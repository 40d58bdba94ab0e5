package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
)

// streamRound measures throughput of line-structured and of binary data
// through every relay.
func streamRound(cfg *config, r *results) {
	size := cfg.sizeMiB << 20
	binary := make([]byte, size)
	rand.Read(binary)
	var lines bytes.Buffer
	for i := 0; lines.Len() < size; i++ {
		fmt.Fprintf(&lines, "line %08d: the quick brown fox jumps over the lazy dog, %x\n", i, i*7919)
	}
	text := lines.Bytes()[:size]
	for _, kind := range []struct {
		metric string
		data   []byte
	}{{"stream text (MiB/s)", text}, {"stream binary (MiB/s)", binary}} {
		for _, name := range relays {
			rate, peak := streamOnce(cfg, name, kind.data)
			r.add(kind.metric, name, rate)
			if name == bridge && kind.metric == "stream binary (MiB/s)" {
				r.add("RSS streaming (MiB)", name, float64(peak)/1024)
			}
		}
	}
}

func streamOnce(cfg *config, name string, data []byte) (mibps float64, peakRSS int) {
	rl := startRelay(cfg, name)
	defer rl.stop()
	in, out := rl.open(true)
	defer out.Close()

	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() { // the bridge's memory while it streams
		defer sampler.Done()
		for {
			peakRSS = max(peakRSS, rss(rl.cmd.Process.Pid))
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	begin := time.Now()
	go func() {
		in.Write(data)
		in.Close()
	}()
	buf := make([]byte, 1<<20)
	got := 0
	for got < len(data) {
		n, err := out.Read(buf)
		if n > 0 && !bytes.Equal(buf[:n], data[got:got+n]) {
			fatalf("%s: stream corrupted at byte %d", name, got)
		}
		got += n
		if err != nil {
			fatalf("%s: read after %d bytes: %v", name, got, err)
		}
	}
	elapsed := time.Since(begin)
	close(stop)
	sampler.Wait()
	return float64(len(data)) / (1 << 20) / elapsed.Seconds(), peakRSS
}

// latencyRound measures the round trip of one line, with the writer kept
// open and with a fresh writer per line (echo x > in).
func latencyRound(cfg *config, r *results) {
	for _, fresh := range []bool{false, true} {
		for _, name := range relays {
			samples := latencyOnce(cfg, name, fresh)
			label := "kept writer"
			if fresh {
				label = "fresh writer"
			}
			r.add("round trip p50, "+label+" (µs)", name, percentile(samples, 50))
			r.add("round trip p99, "+label+" (µs)", name, percentile(samples, 99))
		}
	}
}

func latencyOnce(cfg *config, name string, fresh bool) []float64 {
	rl := startRelay(cfg, name)
	defer rl.stop()
	in, out := rl.open(!fresh)
	defer out.Close()
	if in != nil {
		defer in.Close()
	}
	ping := []byte("x\n")
	buf := make([]byte, 2)
	samples := make([]float64, 0, cfg.pings)
	for i := -50; i < cfg.pings; i++ { // 50 to warm up
		begin := time.Now()
		w := in
		if fresh {
			var err error
			w, err = fifo.OpenWriterNow(rl.in)
			check(err)
		}
		_, err := w.Write(ping)
		check(err)
		if fresh {
			w.Close()
		}
		_, err = io.ReadFull(out, buf)
		check(err)
		if i >= 0 {
			samples = append(samples, float64(time.Since(begin).Nanoseconds())/1e3)
		}
	}
	return samples
}

// execRound compares exec mode, serial and with 4 at once, with spawning
// the program directly from Go.
func execRound(cfg *config, r *results) {
	r.add("exec per request (µs)", "direct spawn", directSpawn(cfg.execN, "true"))
	r.add("exec per request (µs)", bridge, execOnce(cfg, 1))
	r.add("exec per request, 4 at once (µs)", bridge, execOnce(cfg, 4))
}

func directSpawn(n int, prog string, args ...string) float64 {
	begin := time.Now()
	for range n {
		check(exec.Command(prog, args...).Run())
	}
	return float64(time.Since(begin).Microseconds()) / float64(n)
}

func execOnce(cfg *config, concurrency int) float64 {
	dir, err := os.MkdirTemp(cfg.work, "exec-")
	check(err)
	defer os.RemoveAll(dir)
	cmd := exec.Command(cfg.bin, "run", "-dir", dir, "-mode", "exec", "-log-level", "error",
		"-max-concurrent", strconv.Itoa(concurrency), "--", "true")
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	rl := &relay{name: bridge, in: filepath.Join(dir, "in"), out: filepath.Join(dir, "out"), cmd: cmd}
	defer rl.stop()
	for fifo.Check(rl.out) != nil || fifo.Check(rl.in) != nil {
		time.Sleep(time.Millisecond)
	}
	in, out := rl.open(true)
	defer out.Close()
	begin := time.Now()
	go func() {
		in.Write(bytes.Repeat([]byte("x\n"), cfg.execN))
		in.Close()
	}()
	exits := 0
	buf := make([]byte, 64<<10)
	var tail []byte
	for exits < cfg.execN {
		n, err := out.Read(buf)
		check(err)
		tail = append(tail, buf[:n]...)
		for {
			i := bytes.IndexByte(tail, '\n')
			if i < 0 {
				break
			}
			if bytes.Contains(tail[:i], []byte(`"type":"exit"`)) {
				exits++
			}
			tail = tail[i+1:]
		}
	}
	return float64(time.Since(begin).Microseconds()) / float64(cfg.execN)
}

// wrapperRound times starting `true` under each PID-1 wrapper.
func wrapperRound(cfg *config, r *results) {
	dir := filepath.Join(cfg.work, "wrapper")
	for _, w := range []struct {
		name string
		argv []string
	}{
		{"true", []string{"true"}},
		{"tini", []string{"tini", "-s", "--", "true"}},
		{"dumb-init", []string{"dumb-init", "true"}},
		{bridge, []string{cfg.bin, "run", "-dir", dir, "-log-level", "error", "--", "true"}},
	} {
		r.add("start and exit `true` (µs)", w.name, directSpawn(cfg.spawns, w.argv[0], w.argv[1:]...))
	}
}

// resourceRound measures idle memory and the time from start to the first
// echoed byte.
func resourceRound(cfg *config, r *results) {
	for _, name := range relays {
		begin := time.Now()
		rl := startRelay(cfg, name)
		out, err := fifo.OpenReaderNow(rl.out)
		check(err)
		var w *os.File
		for {
			if w, err = fifo.OpenWriterNow(rl.in); err == nil {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		w.Write([]byte("x\n"))
		w.Close()
		buf := make([]byte, 2)
		for {
			n, _ := out.Read(buf)
			if n > 0 {
				break
			}
			time.Sleep(100 * time.Microsecond) // no writer yet reads as EOF
		}
		r.add("start to first echoed byte (ms)", name, float64(time.Since(begin).Microseconds())/1e3)
		if name == bridge {
			time.Sleep(time.Second)
			r.add("RSS idle (MiB)", name, float64(rss(rl.cmd.Process.Pid))/1024)
		}
		out.Close()
		rl.stop()
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func statusField(status, name string) int {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}
