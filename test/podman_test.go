//go:build linux

package test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/fifobridge/fifobridge/internal/testgate"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Kubernetes example, deploy/kubernetes/pod.yaml, played as it is with
// podman kube play (podman and runc from Debian), with images built by the
// test under the names the pod uses. Only how podman runs containers on
// this machine may differ from what a user types (see podmanRuntime).

const (
	// podFile is the example, as a user plays it.
	podFile = "../deploy/kubernetes/pod.yaml"
	// podName is its pod's name; podman names the containers
	// podName-CONTAINER.
	podName = "fifobridge-example"
	// podAnswerTimeout bounds the wait for the sidecar's first answer:
	// podman starts the pod, the sidecar waits for the agent's health and
	// sends.
	podAnswerTimeout = 90 * time.Second
)

// podman runs podman commands for a test, with the machine's global flags.
type podman struct {
	t      *testing.T
	global []string
}

// requirePodman skips t (fails it when FIFOBRIDGE_REQUIRE_PRIVILEGED=1)
// unless this process is root and podman answers.
func requirePodman(t *testing.T) *podman {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "not root"
	} else if _, err := exec.LookPath("podman"); err != nil {
		why = "no podman (Debian: apt-get install podman): " + err.Error()
	}
	p := &podman{t: t}
	if why == "" {
		if res, err := p.cmd(dockerTimeout, "info"); err != nil {
			why = err.Error()
		} else if res.code != 0 {
			why = fmt.Sprintf("podman info exited with %d: %s", res.code, strings.TrimSpace(res.stderr))
		}
	}
	if why != "" {
		testgate.Skip(t, "podman tests need podman as root: %s", why)
	}
	if raceBuild {
		t.Skip("the race-built binary needs the C library, which the scratch images lack; the podman test runs in the static build's run")
	}
	p.global = podmanRuntime(t)
	return p
}

// cmd runs "podman GLOBAL... ARGS..." for at most timeout. The error
// reports a command that could not run or did not end in time, not a
// non-zero exit.
func (p *podman) cmd(timeout time.Duration, args ...string) (dockerResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args = append(slices.Clone(p.global), args...)
	cmd := exec.CommandContext(ctx, "podman", args...)
	cmd.Env = agentEnv(p.t)
	cmd.SysProcAttr = dieWithTest()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	res := dockerResult{stdout: stdout.String(), stderr: stderr.String(), code: -1}
	if cmd.ProcessState != nil {
		res.code = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("podman %s did not end within %v; stderr:\n%s", strings.Join(args, " "), timeout, res.stderr)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return res, fmt.Errorf("podman %s: %v", strings.Join(args, " "), err)
	}
	return res, nil
}

// must runs "podman ARGS..." and fails t unless it exits 0; it returns the
// trimmed standard output.
func (p *podman) must(args ...string) string {
	p.t.Helper()
	res, err := p.cmd(dockerTimeout, args...)
	if err != nil {
		p.t.Fatal(err)
	}
	if res.code != 0 {
		p.t.Fatalf("podman %s exited with %d:\n%s%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	return strings.TrimSpace(res.stdout)
}

// exists reports whether "podman KIND exists NAME" finds it.
func (p *podman) exists(kind, name string) bool {
	p.t.Helper()
	res, err := p.cmd(dockerTimeout, kind, "exists", name)
	if err != nil || (res.code != 0 && res.code != 1) {
		p.t.Fatalf("podman %s exists %s: exit %d, %v: %s", kind, name, res.code, err, res.stderr)
	}
	return res.code == 0
}

// TestPodmanKubePlay plays the Kubernetes example: the sidecar (uid 2000,
// in the pod's group) gets the CLI's answer (run as uid 1000) through
// fifobridge send with exit code 0, the init container ran once, podman
// kube down ends the pod within its terminationGracePeriodSeconds, and
// nothing of it is left.
func TestPodmanKubePlay(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	p := requirePodman(t)
	grace := podGrace(t)
	if p.exists("pod", podName) {
		t.Fatalf("a pod %s exists already; the test plays its own", podName)
	}
	p.buildPodImages(t)
	p.removeNewPauseImages(t)
	t.Cleanup(func() { // after a failure
		if !p.exists("pod", podName) {
			return
		}
		if res, err := p.cmd(dockerTimeout, "kube", "down", podFile); err == nil && res.code == 0 {
			return
		}
		if res, err := p.cmd(dockerTimeout, "pod", "rm", "-f", "-t", "0", podName); err != nil || res.code != 0 {
			t.Errorf("podman pod rm -f %s: %v %s", podName, err, res.stderr)
		}
	})

	p.must("kube", "play", podFile)
	ids := strings.Fields(p.must("ps", "-a", "--no-trunc", "--filter", "pod="+podName, "--format", "{{.ID}}"))
	volumes := strings.Fields(p.must(append([]string{"inspect", "--format",
		`{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}`}, ids...)...))
	t.Cleanup(func() {
		if t.Failed() && p.exists("pod", podName) {
			for _, c := range []string{"agent", "sidecar"} {
				res, _ := p.cmd(dockerTimeout, "logs", podName+"-"+c)
				t.Logf("logs of %s-%s:\n%s%s", podName, c, res.stdout, res.stderr)
			}
		}
	})

	p.waitAnswer(podName+"-sidecar", "answer as 1000:1000: summarize the latest report")
	if st := p.must("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}} {{.RestartCount}}", podName+"-fifo-dir"); st != "exited 0 0" {
		t.Errorf("init container: status, exit code, restarts %q, want \"exited 0 0\" (it ran once)", st)
	}

	begin := time.Now()
	p.must("kube", "down", podFile)
	if took := time.Since(begin); took > grace {
		t.Errorf("podman kube down took %v, more than terminationGracePeriodSeconds (%v)", took.Round(time.Millisecond), grace)
	}
	if p.exists("pod", podName) {
		t.Errorf("pod %s left after podman kube down", podName)
	}
	for _, id := range ids {
		if p.exists("container", id) {
			t.Errorf("container %s of the pod left after podman kube down", id)
		}
	}
	for _, v := range volumes {
		if p.exists("volume", v) {
			t.Errorf("volume %s of the pod left after podman kube down", v)
		}
	}
}

// podGrace returns the pod file's terminationGracePeriodSeconds, and
// checks that it names exactly the images the test builds.
func podGrace(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(podFile)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s*image:\s*(\S+)\s*$`).FindAllSubmatch(b, -1) {
		names = append(names, string(m[1]))
	}
	var want []string
	for _, img := range podImages {
		want = append(want, img.name)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("%s uses the images %q; the test builds %q", podFile, names, want)
	}
	m := regexp.MustCompile(`(?m)^\s*terminationGracePeriodSeconds:\s*(\d+)\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s sets no terminationGracePeriodSeconds", podFile)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return time.Duration(n) * time.Second
}

// waitAnswer follows the container's log until its first "exit code: N"
// line, and fails t unless N is 0 and the line before it is want.
func (p *podman) waitAnswer(container, want string) {
	t := p.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), podAnswerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", append(slices.Clone(p.global), "logs", "-f", container)...)
	cmd.Env = agentEnv(t)
	cmd.SysProcAttr = dieWithTest()
	cmd.WaitDelay = 2 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	code := ""
	for sc := bufio.NewScanner(out); sc.Scan(); {
		lines = append(lines, sc.Text())
		if c, ok := strings.CutPrefix(sc.Text(), "exit code: "); ok {
			code = c
			break
		}
	}
	cancel()
	cmd.Wait()
	switch {
	case code == "":
		t.Fatalf("%s logged no exit code within %v; stdout %q, stderr's end:\n%s", container, podAnswerTimeout, lines, lastLines(stderr.String(), 5))
	case code != "0" || len(lines) < 2 || lines[len(lines)-2] != want:
		t.Fatalf("%s logged %q (stderr's end:\n%s), want %q then \"exit code: 0\"", container, lines, lastLines(stderr.String(), 5), want)
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// removeNewPauseImages removes, when t ends, the infra images podman
// builds for its pods (localhost/podman-pause) that it had not built before
// t.
func (p *podman) removeNewPauseImages(t *testing.T) {
	t.Helper()
	before := p.pauseImages()
	t.Cleanup(func() {
		for _, id := range p.pauseImages() {
			if slices.Contains(before, id) {
				continue
			}
			if res, err := p.cmd(dockerTimeout, "rmi", id); err != nil || res.code != 0 {
				t.Errorf("podman rmi %s (the pause image): %v %s", id, err, res.stderr)
			}
		}
	})
}

// pauseImages returns the ids of podman's infra images.
func (p *podman) pauseImages() []string {
	var ids []string
	for _, line := range strings.Split(p.must("images", "--no-trunc", "--format", "{{.Repository}} {{.ID}}"), "\n") {
		if repo, id, ok := strings.Cut(line, " "); ok && repo == "localhost/podman-pause" {
			ids = append(ids, id)
		}
	}
	return ids
}
