//go:build linux

package test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The host side of containers on the real engine: no container is left
// behind, whatever becomes of its child or of the script that drives it.

// hostRun is one "docker run --rm" of TestDockerHost's no-leak run.
type hostRun struct {
	kind string // what becomes of the child
	want int    // the container's exit code by the contract
}

// hostRunKinds are the ways a child ends, each with the exit code the
// contract gives.
var hostRunKinds = []hostRun{
	{"succeeds", 0},      // stream child exits 0
	{"fails", 3},         // stream child exits 3
	{"times out", 0},     // exec request hits -timeout; the agent ends idle: exec mode 0
	{"crashes", 137},     // stream child SIGKILLed
	{"docker stop", 143}, // sleep stopped by TERM
	{"docker kill", 137}, // the agent itself SIGKILLed
}

// TestDockerHost runs the image on the real engine the way host-side
// drivers do, and checks that no container is ever left behind.
func TestDockerHost(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	requireBusybox(t)
	d := buildImages(t)
	label := dockerLabel + "=" + marker(t)
	t.Cleanup(func() {
		// A container of this test left now is a leak; remove it anyway.
		if ids := listIDs(t, "ps", "-aq", "--filter", "label="+label); len(ids) > 0 {
			t.Errorf("containers of the test left after it: %v", ids)
			docker(t, append([]string{"rm", "-f", "-v"}, ids...)...)
		}
	})

	// 200 runs with --rm (one of each kind with -short), 8 at a time: each exits with
	// the contract's code and none is left in docker ps -a. One deadline
	// bounds them all, so that an engine that stops starting containers
	// fails the test instead of holding it for 200 times a run's own
	// limit.
	t.Run("NoLeaks", func(t *testing.T) {
		runs, parallel := soak("", len(hostRunKinds), 200), 8
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		sem := make(chan struct{}, parallel)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failures []string
		for i := range runs {
			run := hostRunKinds[i%len(hostRunKinds)]
			sem <- struct{}{}
			if ctx.Err() != nil {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("runs %d to %d not started: the engine took longer than the test's deadline", i, runs-1))
				mu.Unlock()
				<-sem
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if err := d.hostRun(ctx, t, label, i, run); err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(failures) > 0 {
			t.Fatalf("%d of %d runs went wrong:\n%s", len(failures), runs, strings.Join(failures[:min(len(failures), 20)], "\n"))
		}
		if ids := listIDs(t, "ps", "-aq", "--filter", "label="+label); len(ids) > 0 {
			t.Fatalf("containers left after %d runs with --rm: %v", runs, ids)
		}
	})

	// A driver script starts a container with --rm and -idle-timeout, waits
	// for it, sends it work, and is SIGKILLed: nothing will ever send again,
	// and the container goes by itself.
	t.Run("DriverKilled", func(t *testing.T) {
		dir := t.TempDir()
		name := fmt.Sprintf("fifobridge-test-%d-driver", os.Getpid())
		script := `
			docker run -d --rm --network none --name "$2" --label "$3" -v "$1:/run/fifobridge" \
				-e FIFOBRIDGE_MODE=exec -e FIFOBRIDGE_IDLE_TIMEOUT=2s "$4" cat >/dev/null || exit 1
			"$5" health -dir "$1" -wait 20s || exit 1
			while :; do "$5" send -dir "$1" work >/dev/null || exit 1; echo sent; done`
		cmd := exec.Command(busybox, "sh", "-c", script, "sh", dir, name, label, d.bbImage, agentBin)
		cmd.Env = agentEnv(t)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The driver has sent work; then it dies, with whatever it runs.
		line := make([]byte, 5)
		stdout.(*os.File).SetReadDeadline(time.Now().Add(hangTimeout))
		if _, err := stdout.Read(line); err != nil || string(line) != "sent\n" {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			t.Fatalf("driver did not send: %q %v; stderr:\n%s", line, err, stderr.String())
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		killed := time.Now()
		if !eventually(hangTimeout, func() bool {
			res, err := dockerCmd(dockerTimeout, "ps", "-aq", "--filter", "name="+name)
			return err == nil && res.code == 0 && strings.TrimSpace(res.stdout) == ""
		}) {
			t.Fatalf("container %s still there %s after its driver was killed", name, time.Since(killed))
		}
		if took := time.Since(killed); took > 2*time.Second+busySlack {
			t.Fatalf("container %s was gone only %s after its driver was killed, want about 2s after (its idle timeout)", name, took)
		}
		if fifos := fifosUnder(dir); len(fifos) > 0 {
			t.Fatalf("FIFOs left in the host directory: %v", fifos)
		}
	})
}

// hostRun runs one container of the no-leak run to its end and checks its
// exit code.
//
// The containers have no network (--network none): they need none, and
// hundreds of starts and ends with the default bridge can deadlock the
// engine's network setup (its libnetwork-setkey hook, moby/libnetwork#2208),
// which then starts no container at all.
func (d *dockerEnv) hostRun(ctx context.Context, t *testing.T, label string, i int, run hostRun) error {
	name := fmt.Sprintf("fifobridge-test-%d-leak-%d", os.Getpid(), i)
	args := []string{"run", "--rm", "--network", "none", "--name", name, "--label", label,
		"-e", "FIFOBRIDGE_RESTART=never", "-e", "FIFOBRIDGE_STOP_TIMEOUT=5s"}
	var dir string
	switch run.kind {
	case "succeeds":
		args = append(args, d.bbImage, "true")
	case "fails":
		args = append(args, d.bbImage, "sh", "-c", "exit 3")
	case "crashes":
		args = append(args, d.bbImage, "sh", "-c", "kill -KILL $$")
	case "times out":
		dir = t.TempDir()
		args = append(args, "-v", dir+":"+containerDir, "-e", "FIFOBRIDGE_MODE=exec",
			"-e", "FIFOBRIDGE_TIMEOUT=300ms", "-e", "FIFOBRIDGE_IDLE_TIMEOUT=1s", d.bbImage, "sleep", "100")
	case "docker stop", "docker kill":
		dir = t.TempDir()
		args = append(args, "-v", dir+":"+containerDir, d.bbImage, "sleep", "100")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.SysProcAttr = dieWithTest() // no docker client outlives a test binary that dies
	cmd.WaitDelay = 2 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start docker run: %v", name, err)
	}
	var hostErr error
	if dir != "" {
		hostErr = hostSide(ctx, t, dir, name, run.kind)
	}
	cmd.Wait()
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s (%s): docker run did not end: %s", name, run.kind, stderr.String())
	case hostErr != nil:
		return fmt.Errorf("%s (%s): %v", name, run.kind, hostErr)
	case code != run.want:
		return fmt.Errorf("%s (%s): docker run exited %d, want %d: %s", name, run.kind, code, run.want, stderr.String())
	}
	if dir != "" && run.kind != "docker kill" { // a SIGKILLed agent cannot clean up
		if fifos := fifosUnder(dir); len(fifos) > 0 {
			return fmt.Errorf("%s (%s): FIFOs left in the host directory: %v", name, run.kind, fifos)
		}
	}
	return nil
}

// hostSide does what the host does to a running container of kind: waits
// for its agent, then sends it a request that times out, or stops or
// kills it.
func hostSide(ctx context.Context, t *testing.T, dir, name, kind string) error {
	if out, err := fifobridge(ctx, t, "health", "-dir", dir, "-wait", "60s"); err != nil {
		return fmt.Errorf("health -wait: %v: %s", err, out)
	}
	switch kind {
	case "times out":
		out, err := fifobridge(ctx, t, "send", "-dir", dir, "x")
		var ee *exec.ExitError
		if err == nil || !errors.As(err, &ee) || ee.ExitCode() != 124 {
			return fmt.Errorf("send to a request that times out: %v, want exit 124: %s", err, out)
		}
	case "docker stop":
		if res, err := dockerCmd(dockerTimeout, "stop", name); err != nil || res.code != 0 {
			return fmt.Errorf("docker stop: %v %s", err, res.stderr)
		}
	case "docker kill":
		if res, err := dockerCmd(dockerTimeout, "kill", name); err != nil || res.code != 0 {
			return fmt.Errorf("docker kill: %v %s", err, res.stderr)
		}
	}
	return nil
}

// fifobridge runs the binary under test on the host.
func fifobridge(ctx context.Context, t *testing.T, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, agentBin, args...)
	cmd.Env = agentEnv(t)
	cmd.SysProcAttr = dieWithTest()
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
