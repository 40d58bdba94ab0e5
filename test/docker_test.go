//go:build linux

package test

import (
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fifobridge/fifobridge/internal/testgate"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The Docker tests run the image of the repository Dockerfile (its `local`
// target, packaging the binary under test) as a container whose FIFO
// directory is a host directory bind-mounted at /run/fifobridge; the host
// side is a shell script, "fifobridge send" and the test's own FIFO
// ends. They need a Docker engine that answers as root on this machine (its
// container pids visible in this PID namespace) and pull no image.

const (
	// dockerLabel marks every container a test starts; its value is the
	// test's marker, so that each test finds exactly its own containers.
	dockerLabel = "fifobridge-test"
	// dockerRunLabel marks every container a top-level test starts, its
	// subtests' included (see dockerRun). Tests count and look for
	// containers only through these labels: the engine may run containers
	// of other programs, and of other test runs, at the same time.
	dockerRunLabel = "fifobridge-test-run"
	// dockerTimeout bounds every docker command that is not expected to
	// wait for something in particular.
	dockerTimeout = 60 * time.Second
	// containerDir is the FIFO directory inside the image (FIFOBRIDGE_DIR).
	containerDir = "/run/fifobridge"
)

// dockerEnv holds the images one TestDocker run builds.
type dockerEnv struct {
	image   string // the Dockerfile's local target: scratch plus /fifobridge
	bbImage string // image plus a static busybox installed in /bin
}

var containerSeq atomic.Int64

// dockerRun is the value of dockerRunLabel for t's containers: this test
// process and t's top-level test.
func dockerRun(t *testing.T) string {
	top, _, _ := strings.Cut(t.Name(), "/")
	return fmt.Sprintf("%d/%s", os.Getpid(), top)
}

// dockerResult is how one docker command ended.
type dockerResult struct {
	stdout, stderr string
	code           int
}

// dockerCmd runs "docker ARGS..." for at most timeout. The error reports a
// command that could not run or did not end in time, not a non-zero exit.
func dockerCmd(timeout time.Duration, args ...string) (dockerResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	res := dockerResult{stdout: stdout.String(), stderr: stderr.String(), code: -1}
	if cmd.ProcessState != nil {
		res.code = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("docker %s did not end within %v; stderr:\n%s", strings.Join(args, " "), timeout, res.stderr)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return res, fmt.Errorf("docker %s: %v", strings.Join(args, " "), err)
	}
	return res, nil
}

// docker runs "docker ARGS..." and fails t unless it exits 0; it returns
// the trimmed standard output.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	res, err := dockerCmd(dockerTimeout, args...)
	if err != nil {
		t.Fatal(err)
	}
	if res.code != 0 {
		t.Fatalf("docker %s exited with %d:\n%s%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	return strings.TrimSpace(res.stdout)
}

// requireDocker skips t (fails it when FIFOBRIDGE_REQUIRE_PRIVILEGED=1)
// unless this process is root and a Docker engine answers.
func requireDocker(t *testing.T) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "not root"
	} else if _, err := exec.LookPath("docker"); err != nil {
		why = "no docker client: " + err.Error()
	} else if res, err := dockerCmd(30*time.Second, "version"); err != nil {
		why = err.Error()
	} else if res.code != 0 {
		why = fmt.Sprintf("docker version exited with %d: %s", res.code, strings.TrimSpace(res.stderr))
	}
	if why == "" {
		return
	}
	testgate.Skip(t, "Docker tests need a Docker engine as root: %s", why)
}

// buildImages builds the test images from the repository Dockerfile and
// removes them when t ends.
func buildImages(t *testing.T) *dockerEnv {
	t.Helper()
	if raceBuild {
		t.Skip("the race-built binary needs the C library, which the scratch image lacks; the docker tests run in the static build's run")
	}
	staticBusybox := requireStaticBusybox(t)
	tag := fmt.Sprintf("fifobridge-test:%d-%d", os.Getpid(), time.Now().UnixNano())
	d := &dockerEnv{image: tag, bbImage: tag + "-busybox"}
	t.Cleanup(func() {
		dockerImages.Lock()
		defer dockerImages.Unlock()
		if res, err := dockerCmd(dockerTimeout, "rmi", d.bbImage, d.image); err != nil || res.code != 0 {
			t.Errorf("remove images %s, %s: %v %s", d.bbImage, d.image, err, res.stderr)
		}
	})

	// The binary under test (TestMain builds it with CGO_ENABLED=0) is the
	// build context of the Dockerfile's local target.
	ctxDir := t.TempDir()
	copyFile(t, agentBin, filepath.Join(ctxDir, "fifobridge"), 0o755)
	dockerfile, err := filepath.Abs("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	build(t, "--target", "local", "-f", dockerfile, "-t", d.image, ctxDir)

	bbDir := t.TempDir()
	copyFile(t, staticBusybox, filepath.Join(bbDir, "busybox"), 0o755)
	writeFile(t, filepath.Join(bbDir, "Dockerfile"), fmt.Sprintf(
		"FROM %s\nCOPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n", d.image))
	build(t, "-t", d.bbImage, bbDir)
	return d
}

// startUnrelated starts a container as another program would, without the
// tests' labels, and returns its name; it runs until t's cleanups that
// were registered after this call have run, then it is removed.
func (d *dockerEnv) startUnrelated(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("fifobridge-unrelated-%d-%d", os.Getpid(), containerSeq.Add(1))
	t.Cleanup(func() {
		if res, err := dockerCmd(dockerTimeout, "rm", "-f", "-v", name); err != nil || res.code != 0 {
			t.Errorf("remove the unrelated container %s: %v %s", name, err, res.stderr)
		}
	})
	docker(t, "run", "-d", "--network", "none", "--name", name, d.bbImage, "sleep", "3600")
	return name
}

// requireStaticBusybox returns the path of a statically linked busybox,
// the shell and tools of the test image (built FROM scratch); it skips t
// without one (fails it when FIFOBRIDGE_REQUIRE_PRIVILEGED=1). Only the
// docker tests need it: on the host, tests use the base system.
func requireStaticBusybox(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("busybox")
	if err == nil {
		var f *elf.File
		if f, err = elf.Open(path); err == nil {
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP {
					err = fmt.Errorf("%s is dynamically linked", path)
				}
			}
			f.Close()
		}
	}
	if err == nil {
		return path
	}
	why := fmt.Sprintf("the docker tests put a static busybox into their image (Debian: apt-get install busybox-static): %v", err)
	testgate.Skip(t, "%s", why)
	return ""
}

// dockerImages is held while a test builds or removes images. The tests
// run in parallel, and the legacy builder takes the layers of one test's
// build as the cache of another's: a removal (rmi prunes the untagged
// layers below an image) while another build stands on those layers
// fails that build ("unknown parent image ID"). Once a build is done its
// image holds its layers, and a removal leaves them.
var dockerImages sync.Mutex

func build(t *testing.T, args ...string) {
	t.Helper()
	dockerImages.Lock()
	defer dockerImages.Unlock()
	// The legacy builder prints a deprecation notice on stderr; only the
	// exit code counts.
	res, err := dockerCmd(5*time.Minute, append([]string{"build", "-q"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	if res.code != 0 {
		t.Fatalf("docker build %s exited with %d:\n%s%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
}

// writeUnforked is os.WriteFile under syscall.ForkLock's read lock, as
// the syscall package asks of code that holds a descriptor a fork must
// not copy: with the tests in parallel, a child forked by another test
// while this file is open for writing holds it until its exec, and an
// exec of the file meanwhile (a script, a copy of the test binary) fails
// with ETXTBSY, "text file busy". Every file a test writes goes through
// it, so that any of them may be run.
func writeUnforked(path string, b []byte, perm os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, b, perm)
}

func copyFile(t *testing.T, from, to string, perm os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeUnforked(to, b, perm); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := writeUnforked(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// listIDs returns the lines of "docker ARGS..." (ids or names).
func listIDs(t *testing.T, args ...string) []string {
	t.Helper()
	out := docker(t, args...)
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// containerOpts describes one "docker run".
type containerOpts struct {
	busybox bool     // run the image with busybox instead of the bare one
	bind    bool     // bind-mount a fresh host directory at /run/fifobridge
	env     []string // FIFOBRIDGE_*=... settings of the agent
	flags   []string // more docker run flags
	program []string // the child's command line (docker run's arguments)
}

// container is one container a test started, and its host FIFO directory.
type container struct {
	t       *testing.T
	name    string
	dir     string   // host directory mounted at /run/fifobridge, or ""
	in      string   // dir/in
	out     string   // dir/out
	volumes []string // its volumes, when known before it is removed
}

// runArgs returns the arguments of "docker CMD..." (run or create, and
// their flags) for opts; the container is labelled with t's marker and
// run, and removed (with its anonymous volumes) when t ends, after a
// graceful stop that must leave no FIFO in its directory.
func (d *dockerEnv) runArgs(t *testing.T, opts containerOpts, cmd ...string) (*container, []string) {
	t.Helper()
	c := &container{t: t, name: fmt.Sprintf("fifobridge-test-%d-%d", os.Getpid(), containerSeq.Add(1))}
	args := append([]string{}, cmd...)
	args = append(args, "--name", c.name, "--label", dockerLabel+"="+marker(t), "--label", dockerRunLabel+"="+dockerRun(t))
	if opts.bind {
		c.dir = t.TempDir()
		c.in, c.out = filepath.Join(c.dir, "in"), filepath.Join(c.dir, "out")
		args = append(args, "-v", c.dir+":"+containerDir)
	}
	for _, e := range opts.env {
		args = append(args, "-e", e)
	}
	args = append(args, opts.flags...)
	if opts.busybox {
		args = append(args, d.bbImage)
	} else {
		args = append(args, d.image)
	}
	args = append(args, opts.program...)
	t.Cleanup(c.cleanup)
	return c, args
}

// start runs a detached container.
func (d *dockerEnv) start(t *testing.T, opts containerOpts) *container {
	t.Helper()
	c, args := d.runArgs(t, opts, "run", "-d")
	docker(t, args...)
	return c
}

// cleanup stops the container gracefully if it still runs, checks that the
// agent removed its FIFOs and wrote nothing on stdout, prints its logs when
// t failed, removes it with its volumes and checks that nothing is left.
func (c *container) cleanup() {
	t := c.t
	volumes := c.volumes
	exists := false
	if res, err := dockerCmd(dockerTimeout, "inspect", "-f",
		`{{.State.Running}} {{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}`, c.name); err == nil && res.code == 0 {
		exists = true
		f := strings.Fields(res.stdout)
		if len(f) > 0 && f[0] == "true" {
			if res, err := dockerCmd(dockerTimeout, "stop", "-t", "15", c.name); err != nil || res.code != 0 {
				t.Errorf("docker stop %s: %v %s", c.name, err, res.stderr)
			}
		}
		volumes = append(volumes, f[1:]...)
	}
	if c.dir != "" {
		if fifos := fifosUnder(c.dir); len(fifos) > 0 {
			t.Errorf("FIFOs left in the host directory after the container ended: %v", fifos)
		}
	}
	if exists {
		if res, err := dockerCmd(dockerTimeout, "logs", c.name); err == nil {
			if res.stdout != "" {
				t.Errorf("container %s wrote on its stdout (logs belong on stderr):\n%s", c.name, res.stdout)
			}
			if t.Failed() {
				code, _ := dockerCmd(dockerTimeout, "inspect", "-f", "{{.State.ExitCode}}", c.name)
				t.Logf("container %s exited with %s; logs (stderr):\n%s", c.name, strings.TrimSpace(code.stdout), res.stderr)
			}
		}
	}
	if res, err := dockerCmd(dockerTimeout, "rm", "-f", "-v", c.name); err != nil {
		t.Errorf("docker rm: %v", err)
	} else if res.code != 0 && !strings.Contains(res.stderr, "No such container") {
		t.Errorf("docker rm -f -v %s exited with %d: %s", c.name, res.code, res.stderr)
	}
	if res, err := dockerCmd(dockerTimeout, "ps", "-aq", "--filter", "label="+dockerLabel+"="+marker(t)); err != nil || strings.TrimSpace(res.stdout) != "" {
		t.Errorf("containers of the test left after it: %q %v", res.stdout, err)
	}
	for _, v := range volumes {
		if res, err := dockerCmd(dockerTimeout, "volume", "inspect", v); err != nil || res.code == 0 {
			t.Errorf("volume %s of container %s left after it (%v)", v, c.name, err)
		}
	}
}

// fifosUnder lists the FIFOs in the tree under dir.
func fifosUnder(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && e.Type()&fs.ModeNamedPipe != 0 {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// inspect returns the container's docker inspect -f FORMAT output.
func (c *container) inspect(format string) string {
	c.t.Helper()
	return docker(c.t, "inspect", "-f", format, c.name)
}

// hostPID is the host pid of the agent (the container's PID 1). It fails t
// unless that process is visible here and is the agent, so that signals
// sent to it from the host reach the right process.
func (c *container) hostPID() int {
	c.t.Helper()
	pid, err := strconv.Atoi(c.inspect("{{.State.Pid}}"))
	if err != nil || pid <= 0 {
		c.t.Fatalf("container %s has no host pid (%v)", c.name, err)
	}
	if cl := cmdline(pid); !strings.HasPrefix(cl, "/usr/local/bin/fifobridge run") {
		c.t.Fatalf("host pid %d of container %s runs %q, not the agent: the engine is in another PID namespace", pid, c.name, cl)
	}
	return pid
}

// exitCode waits for the container to end (at most timeout) and returns
// its exit code.
func (c *container) exitCode(timeout time.Duration) int {
	c.t.Helper()
	res, err := dockerCmd(timeout, "wait", c.name)
	if err != nil {
		c.t.Fatal(err)
	}
	code, err := strconv.Atoi(strings.TrimSpace(res.stdout))
	if res.code != 0 || err != nil {
		c.t.Fatalf("docker wait %s exited with %d: %s%s", c.name, res.code, res.stdout, res.stderr)
	}
	return code
}

// requireRunning fails t unless the container still runs.
func (c *container) requireRunning() {
	c.t.Helper()
	if st := c.inspect("{{.State.Status}} {{.State.ExitCode}}"); !strings.HasPrefix(st, "running ") {
		c.t.Fatalf("container %s is not running: %s", c.name, st)
	}
}

// waitRunning waits until the agent's status file on the host says
// "running".
func (c *container) waitRunning() {
	c.t.Helper()
	var st status
	var err error
	if !eventually(hangTimeout, func() bool {
		st, err = readStatusFile(filepath.Join(c.dir, "status.json"))
		return err == nil && st.State == "running"
	}) {
		c.t.Fatalf("status file of container %s never said running (last %+v, %v)", c.name, st, err)
	}
}

func readStatusFile(path string) (status, error) {
	var st status
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	return st, err
}

// health returns the container's health status and its last check's exit
// code and output.
func (c *container) health() (string, int, string) {
	c.t.Helper()
	var h struct {
		Status string
		Log    []struct {
			ExitCode int
			Output   string
		}
	}
	if err := json.Unmarshal([]byte(c.inspect("{{json .State.Health}}")), &h); err != nil {
		c.t.Fatalf("parse health of %s: %v", c.name, err)
	}
	if len(h.Log) == 0 {
		return h.Status, -1, ""
	}
	last := h.Log[len(h.Log)-1]
	return h.Status, last.ExitCode, last.Output
}

// waitHealth waits at most timeout for the health status want.
func (c *container) waitHealth(want string, timeout time.Duration) {
	c.t.Helper()
	var got, out string
	var code int
	deadline := time.Now().Add(timeout)
	for {
		if got, code, out = c.health(); got == want {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("container %s health %q after %v, want %q; last check exited %d: %s", c.name, got, timeout, want, code, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// hostShell runs a busybox shell script on the host with ARGS as $1...,
// at most hangTimeout, and returns its output; it fails t unless it
// exits 0.
func hostShell(t *testing.T, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, busybox, append([]string{"sh", "-c", script, "sh"}, args...)...)
	cmd.Env = agentEnv(t)
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("host script did not end within %v; stdout %q stderr:\n%s", hangTimeout, stdout.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("host script: %v; stdout %q stderr:\n%s", err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestDocker runs the image built from the repository Dockerfile as a
// container entrypoint, driven from the host through a bind-mounted FIFO
// directory.
func TestDocker(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	requireBusybox(t)
	d := buildImages(t)
	// Nothing of the test may be left once every subtest has ended,
	// whatever failed: no container it labelled (each container's cleanup
	// checks its volumes). Containers of other programs do not count: one
	// runs from before the subtests until after this check.
	unrelated := d.startUnrelated(t)
	t.Cleanup(func() {
		if st := docker(t, "inspect", "-f", "{{.State.Status}}", unrelated); st != "running" {
			t.Errorf("the unrelated container %s is %s, not running, at the check: it shows nothing", unrelated, st)
		}
		if ids := listIDs(t, "ps", "-aq", "--filter", "label="+dockerRunLabel+"="+dockerRun(t)); len(ids) > 0 {
			t.Errorf("containers of the Docker tests left after them: %v", ids)
		}
	})

	// The host writes lines into DIR/in with a shell script and reads them
	// back from DIR/out through cat; then bytes of every value, through
	// writers that come and go, come back exactly and cat never sees EOF.
	t.Run("Stream", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		c := d.start(t, containerOpts{busybox: true, bind: true, program: []string{"cat"}})
		c.waitRunning()
		got := hostShell(t, `
			exec 3<"$1/out"
			for i in 1 2 3; do echo "line $i" > "$1/in"; done
			for i in 1 2 3; do read -r l <&3; echo "$l"; done
			exec 3<&-`, c.dir)
		if want := "line 1\nline 2\nline 3\n"; got != want {
			t.Fatalf("host script read %q, want %q", got, want)
		}

		r := openReader(t, c.out)
		var all []byte
		for i := range 4 {
			chunk := make([]byte, 0, 1024)
			for b := range 256 {
				chunk = append(chunk, byte(b), byte(i))
			}
			w := openWriter(t, c.in)
			w.write(chunk)
			w.close()
			all = append(all, chunk...)
		}
		if got := r.readN(len(all)); string(got) != string(all) {
			t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(all))
		}
		r.expectQuiet(200 * time.Millisecond)
		c.requireRunning()
		roundTrip(t, c.in, r, "still there")
		r.close()

		docker(t, "stop", "-t", "15", c.name)
		if code := c.exitCode(hangTimeout); code != 143 {
			t.Errorf("container exited with %d after docker stop, want 143 (cat killed by TERM)", code)
		}
	})

	// Eight concurrent "fifobridge send" on the host each get their own
	// output and exit code.
	t.Run("ExecSend", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		c := d.start(t, containerOpts{
			busybox: true, bind: true,
			env:     []string{"FIFOBRIDGE_MODE=exec", "FIFOBRIDGE_MAX_CONCURRENT=8"},
			program: []string{"sh", "-c", `x=$(cat); sleep 0.2; echo "got $x"; echo "err $x" >&2; exit $(( x * 37 % 256 ))`},
		})
		c.waitRunning()
		const n = 8
		sends := make([]*sendCmd, n)
		for i := range n {
			if i%2 == 0 {
				sends[i] = startSend(t, c.dir, nil, nil, strconv.Itoa(i))
			} else {
				sends[i] = startSend(t, c.dir, nil, []byte(fmt.Sprintf("%d\n", i)))
			}
		}
		for i, s := range sends {
			res := s.wait(t, 3*hangTimeout)
			code, stdout, stderr := i*37%256, fmt.Sprintf("got %d\n", i), fmt.Sprintf("err %d\n", i)
			if res.code != code || string(res.stdout) != stdout || res.stderr != stderr {
				t.Errorf("send %d: code %d stdout %q stderr %q; want %d %q %q", i, res.code, res.stdout, res.stderr, code, stdout, stderr)
			}
		}
		requireNoReplies(t, c.dir)

		res := runSend(t, c.dir, []byte("3\n"))
		res.requireCode(t, 3*37%256)
		docker(t, "stop", "-t", "15", c.name)
		if code := c.exitCode(hangTimeout); code != 0 {
			t.Errorf("exec-mode container exited with %d after docker stop, want 0", code)
		}
	})

	// docker stop: a child that handles TERM exits 0, not killed at the
	// stop timeout; a child that ignores it is killed after
	// FIFOBRIDGE_STOP_TIMEOUT, before Docker's own limit (20 s), which
	// would have killed it had the agent not.
	t.Run("Stop", func(t *testing.T) {
		cases := []struct {
			name    string
			env     []string
			trap    string
			code    int
			minTook time.Duration
			maxTook time.Duration
		}{
			// The image's FIFOBRIDGE_STOP_TIMEOUT is 8s: exit code 0, not
			// 137, shows the child was not killed.
			{"HandlesTERM", nil, `trap "exit 0" TERM`, 0, 0, 20 * time.Second},
			{"IgnoresTERM", []string{"FIFOBRIDGE_STOP_TIMEOUT=2s"}, `trap "" TERM`, 137, 1500 * time.Millisecond, 20 * time.Second},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				checkLeaks(t, false)
				c := d.start(t, containerOpts{busybox: true, bind: true, env: tc.env,
					program: []string{"sh", "-c", tc.trap + `; echo ready; while :; do sleep 0.1; done`}})
				r := openReader(t, c.out)
				r.expectLine("ready")
				begin := time.Now()
				docker(t, "stop", "-t", "20", c.name)
				took := time.Since(begin)
				if code := c.exitCode(hangTimeout); code != tc.code {
					t.Errorf("container exited with %d, want %d", code, tc.code)
				}
				if took < tc.minTook || took > tc.maxTook {
					t.Errorf("docker stop -t 20 took %v, want between %v and %v", took, tc.minTook, tc.maxTook)
				}
			})
		}
	})

	// docker kill -s reaches the child for every forwarded signal.
	t.Run("Signals", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		sigs := []string{"USR1", "USR2", "HUP", "WINCH"}
		script := `trap "exit 0" TERM`
		for _, s := range sigs {
			script += fmt.Sprintf(`; trap "echo %s" %s`, s, s)
		}
		script += `; echo ready; while :; do sleep 0.1; done`
		c := d.start(t, containerOpts{busybox: true, bind: true, program: []string{"sh", "-c", script}})
		r := openReader(t, c.out)
		r.expectLine("ready")
		for _, s := range sigs {
			docker(t, "kill", "-s", s, c.name)
			r.expectLine(s)
		}
		c.requireRunning()
		docker(t, "stop", "-t", "15", c.name)
		if code := c.exitCode(hangTimeout); code != 0 {
			t.Errorf("container exited with %d after docker stop, want 0", code)
		}
	})

	// A container created with --rm returns the child's exit code
	// (docker start -a waits for it and its removal as docker run --rm
	// does, and tells its anonymous volume before it runs). Without a bind
	// mount the image's VOLUME is an anonymous volume that --rm must
	// remove.
	t.Run("ExitCodes", func(t *testing.T) {
		never := []string{"FIFOBRIDGE_RESTART=never"}
		cases := []struct {
			name    string
			busybox bool
			env     []string
			program []string
			code    int
			says    string // on stderr, when set
		}{
			{"Zero", false, never, []string{"fifobridge", "version"}, 0, ""}, // on PATH
			{"Three", true, never, []string{"sh", "-c", "exit 3"}, 3, ""},
			{"KilledSelf", true, never, []string{"sh", "-c", "kill -KILL $$"}, 137, ""},
			{"RestartsExhausted", true, []string{"FIFOBRIDGE_MAX_RESTARTS=2", "FIFOBRIDGE_BACKOFF_MIN=10ms"}, []string{"sh", "-c", "exit 3"}, 3, ""},
			{"NotFound", false, never, []string{"/no/such/program"}, 127, ""},
			// docker run IMAGE without a command: the hint says where it goes.
			{"NoProgram", false, nil, nil, 125, "docker run IMAGE my-cli"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				checkLeaks(t, false)
				c, args := d.runArgs(t, containerOpts{busybox: tc.busybox, env: tc.env, program: tc.program}, "create", "--rm")
				docker(t, args...)
				c.volumes = strings.Fields(c.inspect(`{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}`))
				if len(c.volumes) != 1 {
					t.Fatalf("container %s has volumes %q, want the image's one anonymous volume", c.name, c.volumes)
				}
				res, err := dockerCmd(dockerTimeout, "start", "-a", c.name)
				if err != nil {
					t.Fatal(err)
				}
				if res.code != tc.code {
					t.Errorf("docker start -a (--rm) %q exited with %d, want %d; stdout %q stderr:\n%s", tc.program, res.code, tc.code, res.stdout, res.stderr)
				}
				if !strings.Contains(res.stderr, tc.says) {
					t.Errorf("docker start -a (--rm) %q says %q, not %q", tc.program, res.stderr, tc.says)
				}
				if res, err := dockerCmd(dockerTimeout, "inspect", c.name); err != nil || res.code == 0 {
					t.Errorf("container %s still exists after it ended with --rm (%v)", c.name, err)
				}
				if res, err := dockerCmd(dockerTimeout, "volume", "inspect", c.volumes[0]); err != nil || res.code == 0 {
					t.Errorf("volume %s still exists after its container ended with --rm (%v)", c.volumes[0], err)
				}
			})
		}
	})

	// A child that leaves 200 orphans to the agent leaves no zombie.
	t.Run("Zombies", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		c := d.start(t, containerOpts{busybox: true, bind: true, program: []string{"sh", "-c", `
			trap "exit 0" TERM
			for i in $(seq 200); do (sleep 1 &); done
			echo spawned
			while :; do sleep 0.1; done`}})
		pid := c.hostPID()
		r := openReader(t, c.out)
		r.expectLine("spawned")
		// The scenario holds: orphans were reparented to the agent.
		if !eventually(time.Second, func() bool { return len(childrenOf(pid)) > 10 }) {
			t.Fatalf("the agent (host pid %d) never had orphans as children: %s", pid, describe(childrenOf(pid)))
		}
		// Every orphan has exited: the agent's one live child is the shell.
		if !eventually(hangTimeout, func() bool { return len(childrenOf(pid)) == 1 }) {
			t.Fatalf("the orphans did not end: the agent (host pid %d) has children %s", pid, describe(childrenOf(pid)))
		}
		requireNoZombies(t, pid)
		var ps string
		if !eventually(5*time.Second, func() bool {
			ps = docker(t, "exec", c.name, "ps", "-o", "stat,pid,ppid,comm")
			for _, line := range strings.Split(ps, "\n")[1:] {
				if strings.HasPrefix(strings.TrimSpace(line), "Z") {
					return false
				}
			}
			return true
		}) {
			t.Fatalf("zombies in the container's process table:\n%s", ps)
		}
		c.requireRunning()
	})

	// The HEALTHCHECK turns healthy, then unhealthy while the agent is
	// frozen (its status goes stale), then healthy again.
	t.Run("Health", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		c := d.start(t, containerOpts{busybox: true, bind: true, program: []string{"cat"}, flags: []string{
			"--health-interval", "1s", "--health-timeout", "3s", "--health-retries", "1", "--health-start-period", "0s"}})
		c.waitHealth("healthy", 20*time.Second)
		pid := c.hostPID()
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("stop the agent (host pid %d): %v", pid, err)
		}
		frozen := time.Now()
		c.waitHealth("unhealthy", 40*time.Second)
		t.Logf("unhealthy %v after the agent was frozen", time.Since(frozen).Round(100*time.Millisecond))
		if _, code, out := c.health(); code != 1 {
			t.Errorf("the failing health check exited with %d, want 1; output: %s", code, out)
		} else if strings.TrimSpace(out) == "" {
			t.Errorf("the failing health check gave no reason")
		}
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatalf("continue the agent (host pid %d): %v", pid, err)
		}
		c.waitHealth("healthy", 20*time.Second)
		r := openReader(t, c.out)
		roundTrip(t, c.in, r, "after the freeze")
	})

	// The binary is on the image's PATH: "docker exec CONTAINER fifobridge
	// health" and "... fifobridge send" work inside the container, without
	// a bind mount (as on Docker Desktop, where FIFOs do not cross to the
	// host).
	t.Run("ExecOnPath", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		c := d.start(t, containerOpts{busybox: true, env: []string{"FIFOBRIDGE_MODE=exec"},
			program: []string{"sh", "-c", `read -r x; echo "got $x"`}})
		if res, err := dockerCmd(dockerTimeout, "exec", c.name, "fifobridge", "health", "-wait", "20s"); err != nil || res.code != 0 {
			t.Fatalf("docker exec %s fifobridge health -wait 20s: exit %d, %v: %s%s", c.name, res.code, err, res.stdout, res.stderr)
		}
		if res, err := dockerCmd(dockerTimeout, "exec", c.name, "fifobridge", "health"); err != nil || res.code != 0 {
			t.Fatalf("docker exec %s fifobridge health: exit %d, %v: %s%s", c.name, res.code, err, res.stdout, res.stderr)
		}
		if got := docker(t, "exec", c.name, "fifobridge", "send", "hello"); got != "got hello" {
			t.Fatalf("docker exec %s fifobridge send hello printed %q, want %q", c.name, got, "got hello")
		}
	})

	// With -user 1000:1000 the child runs as uid and gid 1000 without
	// supplementary groups, and the FIFOs (the agent's, as root) work.
	t.Run("User", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		c := d.start(t, containerOpts{busybox: true, bind: true, env: []string{"FIFOBRIDGE_USER=1000:1000"},
			program: []string{"sh", "-c", `echo "$(id -u) $(id -g) $(id -G)"; exec cat`}})
		r := openReader(t, c.out)
		r.expectLine("1000 1000 1000")
		roundTrip(t, c.in, r, "as user 1000")

		pid := c.hostPID()
		kids := childrenOf(pid)
		if len(kids) != 1 {
			t.Fatalf("agent (host pid %d) has %d children, want 1 (cat):%s", pid, len(kids), describe(kids))
		}
		fields := procStatus(t, kids[0].pid)
		for key, want := range map[string]string{"Uid": "1000 1000 1000 1000", "Gid": "1000 1000 1000 1000", "Groups": ""} {
			if got := fields[key]; got != want {
				t.Errorf("child %s: %s %q, want %q", describe(kids), key, got, want)
			}
		}
		if got := procStatus(t, pid)["Uid"]; got != "0 0 0 0" {
			t.Errorf("agent Uid %q, want root", got)
		}
	})

	// A read-only root filesystem works: the FIFO directory is a bind mount
	// or the image's anonymous volume.
	t.Run("ReadOnly", func(t *testing.T) {
		t.Run("BindMount", func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			c := d.start(t, containerOpts{busybox: true, bind: true, flags: []string{"--read-only"}, program: []string{"cat"}})
			r := openReader(t, c.out)
			roundTrip(t, c.in, r, "read-only root")
			roundTrip(t, c.in, r, "again")
			c.requireRunning()
		})
		t.Run("Volume", func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			c := d.start(t, containerOpts{busybox: true, flags: []string{"--read-only"}, program: []string{"cat"}})
			got := docker(t, "exec", c.name, "sh", "-c", `
				i=0; while [ ! -p /run/fifobridge/out ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
				exec 3</run/fifobridge/out
				echo "in the volume" > /run/fifobridge/in
				read -r l <&3; echo "$l"`)
			if got != "in the volume" {
				t.Fatalf("round trip inside the container read %q", got)
			}
			if v := c.inspect(`{{range .Mounts}}{{.Type}} {{.Destination}}{{end}}`); v != "volume "+containerDir {
				t.Fatalf("mounts of the container: %q, want an anonymous volume at %s", v, containerDir)
			}
			c.requireRunning()
		})
	})
}

// procStatus returns the fields of /proc/PID/status, values with runs of
// white space collapsed.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return out
}
