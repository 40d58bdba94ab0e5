//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

const (
	dockerRunMetric  = "docker run --rm of `true`, p50 (ms)"
	dockerReqMetric  = "one request of `true` into a running container, p50 (ms)"
	sendName         = "fifobridge send"
	dockerExecName   = "docker exec"
	dockerTini       = "tini"
	dockerContainers = "/run/fifobridge" // the exec container's FIFO directory
)

var dockerRunContenders = []string{bareTrue, dockerTini, bridge, bridgeBefore}

// dockerPart times, as a user's script sees them, `docker run --rm` of
// `true` bare, under tini and under fifobridge (each b.dockerRuns times),
// and one request of `true` into a running container: `fifobridge send`
// to its exec-mode agent through a bind-mounted FIFO directory, against
// `docker exec`. The image is built on the first round and removed, with
// every container labelled for the run, when the run ends.
func dockerPart(b *bench, round int, r *results) error {
	why, err := b.dockerReady()
	if err != nil {
		return err
	}
	if why != "" {
		r.note("docker: skipped (%s)", why)
		return nil
	}
	for _, name := range rotate(b.have(dockerRunContenders, r), round) {
		argv := b.image.trueArgv(name)
		if argv == nil {
			r.note("docker run: %s skipped (no static tini: Debian's tini has tini-static)", name)
			continue
		}
		ms, err := b.timeRuns(append([]string{b.tools["docker"]}, argv...))
		if err != nil {
			return err
		}
		r.add(dockerRunMetric, name, percentile(ms, 50))
	}
	return b.sendVsExec(round, r)
}

// dockerReady builds the image of the parts that use Docker on first
// use; why says why Docker cannot be used here ("" when it can).
func (b *bench) dockerReady() (why string, err error) {
	if b.image != nil {
		return "", nil
	}
	if why := b.dockerMissing(); why != "" {
		return why, nil
	}
	img, err := b.buildImage()
	if err != nil {
		return "", err
	}
	b.image, b.imageTag = img, img.tag
	return "", nil
}

// trueArgv is docker's argv that runs `true` in a new container under
// contender name, or nil when the image lacks what it needs.
func (img *dockerImage) trueArgv(name string) []string {
	run := img.runArgs("--rm", img.tag)
	switch name {
	case bareTrue:
		return append(run, "/true")
	case dockerTini:
		if !img.tini {
			return nil
		}
		return append(run, "/tini", "--", "/true")
	case bridge, bridgeBefore:
		bin := "/fifobridge"
		if name == bridgeBefore {
			bin += "-before"
		}
		return append(run, bin, "run", "-dir", "/fifos", "-restart", "never", "-log-level", "error", "--", "/true")
	}
	return nil
}

// timeRuns runs argv b.dockerRuns times, after one that is not counted,
// and returns each run's time in ms.
func (b *bench) timeRuns(argv []string) ([]float64, error) {
	ms := make([]float64, 0, b.dockerRuns)
	for i := -1; i < b.dockerRuns; i++ {
		took, err := timed(argv...)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			ms = append(ms, float64(took.Microseconds())/1e3)
		}
	}
	return ms, nil
}

// sendVsExec starts a container whose agent runs `true` in exec mode on a
// host directory, and times `fifobridge send` of one request against
// `docker exec` of `true` in the same container.
func (b *bench) sendVsExec(round int, r *results) error {
	host, err := os.MkdirTemp(b.work, "docker-dir-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(host)
	b.containers++
	name := fmt.Sprintf("fifobench-%d-%d", os.Getpid(), b.containers)
	args := b.image.runArgs("-d", "--name", name, "-v", host+":"+dockerContainers, b.image.tag,
		"/fifobridge", "run", "-dir", dockerContainers, "-mode", "exec", "-log-level", "error", "--", "/true")
	if _, err := dockerCmd(args...); err != nil {
		return err
	}
	defer dockerCmd("rm", "-f", "-v", name)
	// Served once the first request is answered.
	wait := strconv.Itoa(int(dockerTimeout/time.Second)) + "s"
	if _, err := timed(b.bin, "send", "-dir", host, "-wait", wait, "x"); err != nil {
		return err
	}
	for _, who := range rotate([]string{sendName, dockerExecName}, round) {
		argv := []string{b.bin, "send", "-dir", host, "x"}
		if who == dockerExecName {
			argv = []string{b.tools["docker"], "exec", name, "/true"}
		}
		ms, err := b.timeRuns(argv)
		if err != nil {
			return err
		}
		r.add(dockerReqMetric, who, percentile(ms, 50))
	}
	return nil
}

// closeDocker removes the docker part's image and containers, if any.
func (b *bench) closeDocker() error {
	if b.image == nil {
		return nil
	}
	err := b.image.remove()
	b.image = nil
	return err
}
