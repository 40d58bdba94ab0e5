//go:build linux

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A fork bomb in an exec request under a pids limit: the agent must not
// need a thread, a descriptor or a fork it cannot have to stop it. The
// program of these agents runs its request's text as a shell script.

// bombProgram is the exec-mode program: sh running its stdin.
var bombProgram = []string{"sh", "-c", `eval "$(cat)"`}

// bombScript forks until the pids limit refuses, every process keeping
// its slot (a sleeper) once it has forked twice; the request's own shell
// forks the first and waits, so that the request runs until canceled. A
// refused fork ends its shell, quietly.
const bombScript = `exec 2>/dev/null; f() { f & f & exec sleep 1000; }; f & exec sleep 1000`

// bombEnv is one agent under a pids limit, as a bomb run sees it.
type bombEnv struct {
	dir      string       // the agent's FIFO directory, here
	agentDir string       // the same directory as the agent sees it
	w, r     *fifoEnd     // its input and output FIFOs
	limited  func() int   // how many forks the pids limit has refused so far
	settled  func() bool  // only the agent's own tasks are left under the limit
	alive    func()       // fails the test unless the agent still runs
	threads  func() int   // the agent's threads
	send     func() error // runs "fifobridge send" of "echo served", checks it
}

// bombRuns is how many times each fork-bomb test runs the bomb.
func bombRuns() int { return soak("FIFOBRIDGE_BOMB_RUNS", 2, 20) }

// runBomb runs one bomb: three requests wait on FIFOs of their own, a
// fourth forks until the limit refuses; the bomb is canceled; the agent
// is still there and made no thread meanwhile, the three get their exit
// frames once let go, the next send is served, and nothing of the bomb is
// left.
func runBomb(t *testing.T, e bombEnv, run int) {
	t.Helper()
	all := map[string]*response{}
	var others []string
	for i := range 3 {
		id := fmt.Sprintf("other-%d-%d", run, i)
		gate := fmt.Sprintf("gate-%d", i)
		if err := unix.Mkfifo(filepath.Join(e.dir, gate), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(filepath.Join(e.dir, gate))
		script := fmt.Sprintf(`echo waiting; read x < %s/%s; echo "done $x"`, e.agentDir, gate)
		e.w.writeLine(jsonLine(t, map[string]any{"id": id, "stdin": script}))
		others = append(others, id)
	}
	for _, id := range others {
		for all[id] == nil || string(all[id].stdout) != "waiting\n" {
			if addFrame(t, all, readFrame(t, e.r)).done() {
				t.Fatalf("request %s ended before the bomb:%s", id, all[id])
			}
		}
	}
	refused := e.limited()
	threads := e.threads()
	bomb := fmt.Sprintf("bomb-%d", run)
	e.w.writeLine(jsonLine(t, map[string]any{"id": bomb, "stdin": bombScript}))
	if f := readFrame(t, e.r); f.ID != bomb || f.Type != "start" {
		t.Fatalf("frame %s, want the bomb's start", f.line)
	} else {
		addFrame(t, all, f)
	}
	if !eventually(hangTimeout, func() bool { return e.limited() > refused }) {
		t.Fatalf("run %d: the pids limit never refused a fork of the bomb", run)
	}
	e.alive()
	e.w.writeLine(fmt.Sprintf(`{"cancel":%q}`, bomb))
	resp := collect(t, e.r, all, bomb)[bomb]
	if resp.exit == nil || !strings.Contains(resp.exit.line, `"canceled":true`) {
		t.Fatalf("run %d: the bomb did not end canceled (%d forks refused before it, %d since):%s", run, refused, e.limited()-refused, resp)
	}
	e.alive()
	for i := range others {
		g := openWriter(t, filepath.Join(e.dir, fmt.Sprintf("gate-%d", i)))
		g.writeLine("go")
		g.close()
	}
	collect(t, e.r, all, others...)
	for _, id := range others {
		all[id].requireExit(t, 0, "waiting\ndone go\n")
	}
	if err := e.send(); err != nil {
		t.Fatalf("run %d: %v", run, err)
	}
	if !eventually(hangTimeout, e.settled) {
		t.Fatalf("run %d: processes of the bomb are left under the pids limit", run)
	}
	// A thread made while the limit was used up would have failed, and
	// the runtime would have ended the agent: it was lucky.
	if n := e.threads(); n != threads {
		t.Errorf("run %d: the agent has %d threads, %d before the bomb: it needed new ones", run, n, threads)
	}
}

// pidsEvents returns the "max" count of the pids.events files of the v1
// cgroup dir and of the cgroups below it: the forks their limits refused.
func pidsEvents(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "pids.events" {
			b, _ := os.ReadFile(path)
			if v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "max "); ok {
				m, _ := strconv.Atoi(v)
				n += m
			}
		}
		return nil
	})
	return n
}

// pidsCurrent reads the pids.current of the v1 cgroup dir.
func pidsCurrent(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "pids.current"))
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// threadsOf returns the number of threads of process pid.
func threadsOf(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}

// testPidsCgroup makes a cgroup v1 pids cgroup with pids.max limit for one
// test, and kills and removes what is left in it at the end.
func testPidsCgroup(t *testing.T, limit int) string {
	t.Helper()
	root := "/sys/fs/cgroup/pids"
	dir := filepath.Join(root, fmt.Sprintf("fbtest-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
	err := os.Mkdir(dir, 0o755)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(limit)), 0)
	}
	if err != nil {
		os.Remove(dir)
		requirePrivileged(t, "a cgroup v1 pids hierarchy at "+root+": "+err.Error())
		t.Skipf("needs a cgroup v1 pids hierarchy at %s: %v", root, err)
	}
	t.Cleanup(func() {
		var left []string
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				left = append(left, path)
			}
			return nil
		})
		for i := len(left) - 1; i >= 0; i-- {
			eventually(5*time.Second, func() bool {
				b, _ := os.ReadFile(filepath.Join(left[i], "cgroup.procs"))
				for _, f := range strings.Fields(string(b)) {
					pid, _ := strconv.Atoi(f)
					unix.Kill(pid, unix.SIGKILL)
				}
				return unix.Rmdir(left[i]) == nil
			})
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("cannot remove the test's pids cgroup %s", dir)
		}
	})
	return dir
}

// TestForkBombPids: an agent in a cgroup v1 pids cgroup with pids.max 300
// (set up here) survives a fork bomb of one of its requests, with its
// children's pids budget (-cgroup to a cgroup v2 directory, so cgroups are
// in use) and without (-cgroup off: the agent's reserved threads alone).
func TestForkBombPids(t *testing.T) {
	// Not parallel: a fork bomb takes the machine's CPUs, by design.
	for _, containment := range []string{"cgroup", "off"} {
		t.Run(containment, func(t *testing.T) {
			checkLeaks(t, false)
			v2 := "off"
			if containment == "cgroup" {
				v2 = testCgroup(t)
			}
			cg := testPidsCgroup(t, 300)
			for run := range max(1, bombRuns()/2) {
				a, w, r := startExec(t, agentConfig{
					program: bombProgram,
					flags:   []string{"-cgroup", v2, "-stop-timeout", "1s", "-max-concurrent", "4"},
					// The shell stays, so that the harness finds the agent as its child.
					wrap: []string{"/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && "$@"`, cg},
				})
				if containment == "cgroup" && !eventually(hangTimeout, func() bool {
					return strings.Contains(a.stderr(), "children share a pids budget")
				}) {
					t.Errorf("the agent set no pids budget for its children:\n%s", a.stderr())
				}
				runBomb(t, bombEnv{
					dir: a.dir, agentDir: a.dir, w: w, r: r,
					limited: func() int { return pidsEvents(cg) },
					// The wrapping shell and the agent's threads.
					settled: func() bool { return pidsCurrent(cg) == 1+threadsOf(a.pid) },
					alive:   a.requireRunning,
					threads: func() int { return threadsOf(a.pid) },
					send: func() error {
						res := runSend(t, a.dir, []byte("echo served\n"))
						if res.code != 0 || string(res.stdout) != "served\n" {
							return fmt.Errorf("send after the bomb: code %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
						}
						return nil
					},
				}, run)
				w.close()
				r.close()
				if code := a.stop(); code != 0 {
					t.Errorf("agent exited %d, want 0", code)
				}
			}
		})
	}
}

// TestDockerForkBomb: the image as the entrypoint of a container run with
// --pids-limit 64 (its cgroup file system read-only: the agent's reserved
// threads alone keep it going) survives a fork bomb of one of its
// requests, bomb after bomb.
func TestDockerForkBomb(t *testing.T) {
	// Not parallel: a fork bomb takes the machine's CPUs, by design.
	requireDocker(t)
	d := buildImages(t)
	checkLeaks(t, false)
	c := d.start(t, containerOpts{busybox: true, bind: true,
		env:     []string{"FIFOBRIDGE_MODE=exec", "FIFOBRIDGE_STOP_TIMEOUT=1s", "FIFOBRIDGE_MAX_CONCURRENT=4"},
		flags:   []string{"--pids-limit", "64"},
		program: bombProgram,
	})
	c.waitRunning()
	pid := c.hostPID()
	cg := hostPidsCgroup(t, pid)
	if b, _ := os.ReadFile(filepath.Join(cg, "pids.max")); strings.TrimSpace(string(b)) != "64" {
		t.Fatalf("the container's pids cgroup %s has pids.max %q, want 64", cg, b)
	}
	r := openReader(t, c.out)
	w := openWriter(t, c.in)
	for run := range bombRuns() {
		runBomb(t, bombEnv{
			dir: c.dir, agentDir: containerDir, w: w, r: r,
			limited: func() int { return pidsEvents(cg) },
			settled: func() bool { return pidsCurrent(cg) == threadsOf(pid) },
			alive:   c.requireRunning,
			threads: func() int { return threadsOf(pid) },
			send: func() error {
				res := runSend(t, c.dir, []byte("echo served\n"))
				if res.code != 0 || string(res.stdout) != "served\n" {
					return fmt.Errorf("send after the bomb: code %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
				}
				return nil
			},
		}, run)
	}
	w.close()
	r.close()
	docker(t, "stop", "-t", "15", c.name)
	if code := c.exitCode(hangTimeout); code != 0 {
		t.Errorf("container exited with %d after docker stop, want 0", code)
	}
}

// hostPidsCgroup returns the directory of the cgroup v1 pids cgroup of
// process pid, here.
func hostPidsCgroup(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && f[1] == "pids" {
			return filepath.Join("/sys/fs/cgroup/pids", f[2])
		}
	}
	requirePrivileged(t, "a cgroup v1 pids hierarchy for Docker's --pids-limit")
	t.Skipf("process %d has no cgroup v1 pids cgroup (Docker on cgroup v2?)", pid)
	return ""
}
