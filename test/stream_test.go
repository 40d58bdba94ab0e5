//go:build linux

package test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"
)

// catPrograms are the children that copy stdin to stdout.
func catPrograms(t *testing.T) map[string]agentConfig {
	t.Helper()
	requireBusybox(t)
	return map[string]agentConfig{
		"busybox cat": {program: []string{busybox, "cat"}},
		"helper cat":  {program: helperProgram(), helper: "cat"},
	}
}

func TestStreamRoundTrip(t *testing.T) {
	t.Parallel()
	for name, cfg := range catPrograms(t) {
		t.Run(name, func(t *testing.T) {
			checkLeaks(t, false)
			cfg.flags = []string{"-restart", "never"}
			a := startAgent(t, cfg)
			r := openReader(t, a.out)
			// Each line through its own writer: the child must never see
			// EOF when a writer leaves (cat would exit, and with -restart
			// never the agent would exit too).
			for i := range 5 {
				roundTrip(t, a.in, r, fmt.Sprintf("line %d", i))
				// Not synchronisation: a moment with no writer at all,
				// in which an EOF passed on would end cat.
				time.Sleep(50 * time.Millisecond)
			}
			pid := a.waitChild()
			// Two writers at once, then none for a while.
			w1, w2 := openWriter(t, a.in), openWriter(t, a.in)
			w1.writeLine("from w1")
			r.expectLine("from w1")
			w2.writeLine("from w2")
			r.expectLine("from w2")
			w1.close()
			w2.close()
			// Not synchronisation: the while with no writer is what is
			// tested.
			time.Sleep(300 * time.Millisecond)
			roundTrip(t, a.in, r, "later")
			a.requireRunning()
			st := a.waitChild()
			if st != pid {
				t.Fatalf("child changed from pid %d to %d: it saw EOF or died", pid, st)
			}
			if s, _ := a.readStatus(); s.Child.Starts != 1 {
				t.Fatalf("child started %d times, want 1", s.Child.Starts)
			}
			r.expectQuiet(200 * time.Millisecond)
		})
	}
}

// TestByteExactStream pushes 64 MiB (16 MiB with -short) of random bytes
// through a cat child while the output reader disconnects and reconnects
// several times.
func TestByteExactStream(t *testing.T) {
	t.Parallel()
	size := soak("", 16<<20, 64<<20)
	data := make([]byte, size)
	rand.NewChaCha8([32]byte{1, 2, 3}).Read(data)
	want := sha256.Sum256(data)
	// The reader hangs up after these many bytes in total.
	cuts := []int{1, 4096 + 7, 65536, 5_000_011, size/4 + 3, size / 2, size*3/4 + 17, size - 1}

	for name, cfg := range catPrograms(t) {
		t.Run(name, func(t *testing.T) {
			checkLeaks(t, false)
			a := startAgent(t, cfg)

			writeErr := make(chan error, 1)
			w := openWriter(t, a.in)
			go func() {
				rnd := rand.New(rand.NewPCG(1, 2))
				w.f.SetWriteDeadline(time.Now().Add(2 * time.Minute))
				for off := 0; off < size; {
					n := min(size-off, 1+rnd.IntN(1<<20))
					if _, err := w.f.Write(data[off : off+n]); err != nil {
						writeErr <- fmt.Errorf("write at offset %d: %w", off, err)
						return
					}
					off += n
				}
				writeErr <- nil
			}()

			got := make([]byte, 0, size)
			r := openReader(t, a.out)
			for _, cut := range append(cuts, size) {
				for len(got) < cut {
					b, err := r.readSome(min(cut-len(got), 256<<10), time.Now().Add(hangTimeout))
					if err != nil {
						t.Fatalf("read after %d bytes: %v", len(got), err)
					}
					got = append(got, b...)
				}
				if cut == size {
					break
				}
				r.close()
				// The agent writes on without a reader.
				waitFIFOHolds(t, a.out, min(size-cut, 64<<10))
				r = openReader(t, a.out)
			}
			if err := <-writeErr; err != nil {
				t.Fatal(err)
			}
			w.close()
			r.expectQuiet(300 * time.Millisecond)
			if sha256.Sum256(got) != want {
				i := 0
				for i < len(got) && got[i] == data[i] {
					i++
				}
				t.Fatalf("received %d bytes that differ from the %d sent, first at offset %d", len(got), size, i)
			}
			a.requireRunning()
			if s, _ := a.readStatus(); s.Child.Starts != 1 {
				t.Fatalf("child started %d times, want 1", s.Child.Starts)
			}
		})
	}
}

// TestDescriptorStability checks the agent holds as many descriptors after
// many writer, reader and child cycles as before them.
func TestDescriptorStability(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		program: helperProgram(), helper: "lines",
		flags: []string{"-restart", "always", "-max-restarts", "-1", "-backoff-min", "1ms", "-backoff-max", "1ms"},
	})
	pid := fmt.Sprint(a.pid)

	// Warm up: one of each cycle, so that the baseline is the state
	// "everything came and went once".
	r := openReader(t, a.out)
	r.expectLine("ready")
	roundTrip(t, a.in, r, "warm")
	w := openWriter(t, a.in)
	w.writeLine("exit")
	r.expectLine("ready")
	w.close()
	r.close()
	// The baseline is the lowest count seen while idle, so that a
	// descriptor open for a moment (the status file) does not count.
	before, beforeList := fdCount(pid), fdTargets(pid)
	for range 20 {
		time.Sleep(20 * time.Millisecond)
		if n := fdCount(pid); n < before {
			before, beforeList = n, fdTargets(pid)
		}
	}

	r = openReader(t, a.out)
	for i := range 1000 {
		w := openWriter(t, a.in)
		if i%100 == 0 {
			w.writeLine(fmt.Sprint("writer ", i))
			r.expectLine(fmt.Sprint("writer ", i))
		}
		w.close()
	}
	r.close()

	w = openWriter(t, a.in)
	for i := range 200 {
		r := openReader(t, a.out)
		w.writeLine(fmt.Sprint("reader ", i))
		r.expectLine(fmt.Sprint("reader ", i))
		r.close()
	}

	r = openReader(t, a.out)
	for range 100 {
		w.writeLine("exit")
		r.expectLine("ready")
	}
	w.close()
	r.close()
	a.requireRunning()
	// A restart is counted before its child starts: wait for both.
	a.waitStatus("101 restarts and 102 starts", func(st status) bool {
		return st.Child.Restarts >= 101 && st.Child.Starts >= 102
	})

	var after int
	if !eventually(5*time.Second, func() bool { after = fdCount(pid); return after == before }) {
		t.Fatalf("agent has %d descriptors after the cycles, %d before\nbefore:\n%safter:\n%s",
			after, before, beforeList, fdTargets(pid))
	}
}

// TestNoSpin checks an idle agent uses (almost) no CPU, whatever peers came
// and went before.
func TestNoSpin(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	scenarios := map[string]func(t *testing.T, a *agent){
		"no peer ever": func(t *testing.T, a *agent) {},
		"writers came and went": func(t *testing.T, a *agent) {
			r := openReader(t, a.out)
			for i := range 200 {
				w := openWriter(t, a.in)
				if i%20 == 0 {
					w.writeLine("x")
					r.expectLine("x")
				}
				w.close()
			}
		},
		"reader came and went": func(t *testing.T, a *agent) {
			r := openReader(t, a.out)
			w := openWriter(t, a.in)
			w.writeLine("x")
			r.expectLine("x")
			r.close()
			w.writeLine("held back") // output pending without a reader
		},
	}
	for name, phase := range scenarios {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{program: []string{busybox, "cat"}})
			phase(t, a)
			// Not synchronisation: the measurement leaves out half a
			// second in which the agent may still finish the phase's
			// work, then counts its CPU over two idle seconds.
			time.Sleep(500 * time.Millisecond)
			before := agentCPU(t, a)
			time.Sleep(2 * time.Second)
			if used := agentCPU(t, a) - before; used >= 20 {
				t.Fatalf("idle agent used %d clock ticks of CPU in 2s", used)
			}
			a.requireRunning()
		})
	}
}

func agentCPU(t *testing.T, a *agent) int {
	t.Helper()
	st, err := readStat(a.pid)
	if err != nil {
		t.Fatalf("read agent stat: %v", err)
	}
	return st.cpu
}

// TestCancellableOpens checks a stop request is honoured at once while
// the agent waits for a peer or for its FIFOs.
func TestCancellableOpens(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	cases := []struct {
		name  string
		flags []string
		sig   syscall.Signal
		setup func(t *testing.T, a *agent)
		// ready waits until the agent is in the wait under test; by
		// default until it serves with its child running.
		ready func(t *testing.T, a *agent)
		codes []int // acceptable exit codes
	}{
		{name: "no peer on either FIFO", sig: syscall.SIGTERM, codes: []int{0, 143}},
		{name: "no peer, SIGINT", sig: syscall.SIGINT, codes: []int{0, 130, 143}},
		{
			name: "output pending without reader", sig: syscall.SIGTERM, codes: []int{0, 143},
			setup: func(t *testing.T, a *agent) {
				w := openWriter(t, a.in)
				w.writeLine("nobody reads this")
				w.close()
			},
			ready: func(t *testing.T, a *agent) { waitFIFOHolds(t, a.out, len("nobody reads this\n")) },
		},
		{
			name: "writer connected, no reader", sig: syscall.SIGTERM, codes: []int{0, 143},
			setup: func(t *testing.T, a *agent) { openWriter(t, a.in) },
		},
		{
			name: "waiting for FIFOs with -create=false", flags: []string{"-create=false"}, sig: syscall.SIGTERM, codes: []int{0, 143},
			ready: func(t *testing.T, a *agent) { a.waitWaitingFor(a.in) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, false)
			cfg := agentConfig{program: []string{busybox, "cat"}, flags: tc.flags}
			if slicesContains(tc.flags, "-create=false") {
				cfg.dir = t.TempDir()
			}
			a := startAgent(t, cfg)
			if tc.setup != nil {
				tc.setup(t, a)
			}
			if tc.ready != nil {
				tc.ready(t, a)
			} else {
				a.waitChild()
			}
			a.requireRunning()
			start := time.Now()
			a.signal(tc.sig)
			code := a.wait(hangTimeout)
			if d := time.Since(start); d > time.Second {
				t.Errorf("agent took %v to stop on %v", d.Round(time.Millisecond), tc.sig)
			}
			if !slicesContains(tc.codes, code) {
				t.Errorf("agent exited with %d on %v, want one of %v", code, tc.sig, tc.codes)
			}
		})
	}
}

func slicesContains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestCreateFalse(t *testing.T) {
	t.Parallel()
	requireBusybox(t)

	t.Run("waits for FIFOs created later", func(t *testing.T) {
		checkLeaks(t, false)
		dir := t.TempDir()
		started := dir + "/child-started"
		a := startAgent(t, agentConfig{
			dir: dir, flags: []string{"-create=false"},
			program: append(sh(t, `echo started >>"$1"; exec "$2" cat`), started, busybox),
		})
		a.waitWaitingFor(a.in)
		requireAbsent(t, a.in, a.out, started)
		if err := syscall.Mkfifo(a.in, 0o600); err != nil {
			t.Fatal(err)
		}
		a.waitWaitingFor(a.out)
		requireAbsent(t, a.out, started) // it waits for both
		if err := syscall.Mkfifo(a.out, 0o600); err != nil {
			t.Fatal(err)
		}
		r := openReader(t, a.out)
		roundTrip(t, a.in, r, "hello")
		if _, err := os.Stat(started); err != nil {
			t.Fatalf("child did not start: %v", err)
		}
		a.stop()
		for _, p := range []string{a.in, a.out} {
			if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("FIFO %s the agent did not create is gone or changed after it stopped: %v", p, err)
			}
		}
	})

	for _, tc := range []struct {
		name, file string
		flags      []string
	}{
		{"regular file at in", "in", nil},
		{"regular file at out", "out", nil},
		{"regular file at in with -create=false", "in", []string{"-create=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, false)
			dir := t.TempDir()
			path := dir + "/" + tc.file
			content := []byte("precious data\n")
			mtime := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, mtime, mtime); err != nil {
				t.Fatal(err)
			}
			if slicesContains(tc.flags, "-create=false") {
				other := map[string]string{"in": "out", "out": "in"}[tc.file]
				if err := syscall.Mkfifo(dir+"/"+other, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			a := startAgent(t, agentConfig{dir: dir, flags: tc.flags, program: []string{busybox, "cat"}})
			if code := a.wait(hangTimeout); code != 125 {
				t.Errorf("agent exited with %d, want 125", code)
			}
			if !bytes.Contains([]byte(a.stderr()), []byte(path)) {
				t.Errorf("stderr does not name %s:\n%s", path, a.stderr())
			}
			requireOneLine(t, "agent", a.stderr())
			fi, err := os.Lstat(path)
			if err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s is no longer a regular file: %v", path, err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, content) || !fi.ModTime().Equal(mtime) {
				t.Errorf("%s changed: content %q mtime %v, want %q %v", path, got, fi.ModTime(), content, mtime)
			}
		})
	}

	for _, which := range []string{"in", "out"} {
		t.Run(which+" FIFO re-created while running", func(t *testing.T) {
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{program: []string{busybox, "cat"}, flags: []string{"-restart", "never"}})
			r := openReader(t, a.out)
			roundTrip(t, a.in, r, "before")
			path := map[string]string{"in": a.in, "out": a.out}[which]
			if which == "out" {
				r.close()
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			// Made again at once: the agent follows the new FIFO by its
			// creation (or, had it been quicker, made it itself).
			if err := syscall.Mkfifo(path, 0o600); err != nil && err != syscall.EEXIST {
				t.Fatal(err)
			}
			if which == "out" {
				r = openReader(t, a.out)
			}
			roundTrip(t, a.in, r, "after")
			a.requireRunning()
		})
	}
}

func requireAbsent(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("%s exists too early", p)
		}
	}
}
