//go:build linux

package main

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// dockerImage is the image of the docker part, built once a run, FROM
// scratch: the fifobridge binaries (static), a static `true` (busybox,
// which runs as the applet its name says), tini-static, and the host's
// sh with the libraries it loads.
type dockerImage struct {
	tag    string // also the value of dockerLabel on it and every container
	tini   bool   // /tini is in it
	before bool   // /fifobridge-before is in it
}

// dockerLabel marks the image and every container of a run, which the run
// removes at its end.
const dockerLabel = "fifobench"

// dockerTimeout bounds every docker command.
const dockerTimeout = 2 * time.Minute

// dockerCmd runs docker with args and returns its trimmed standard output;
// an exit other than 0 is an error with its standard error.
func dockerCmd(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// dockerMissing says why the docker part cannot run here, or "".
func (b *bench) dockerMissing() string {
	if b.tools["docker"] == "" {
		return "no docker client"
	}
	if os.Geteuid() != 0 {
		return "not root (the agent's FIFO directory is bind-mounted)"
	}
	if b.tools["busybox"] == "" || !isStatic(b.tools["busybox"]) {
		return "no static busybox for the image's `true` (Debian: busybox-static)"
	}
	if _, err := dockerCmd("version"); err != nil {
		return "no docker engine answers: " + err.Error()
	}
	return ""
}

// isStatic says whether the ELF binary at path has no program interpreter.
func isStatic(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// buildImage builds the docker part's image, labelled, from a context
// directory that holds only what the image needs.
func (b *bench) buildImage() (*dockerImage, error) {
	img := &dockerImage{tag: fmt.Sprintf("fifobench:%d-%d", os.Getpid(), time.Now().UnixNano())}
	ctxDir, err := os.MkdirTemp(b.work, "image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(ctxDir)
	// Each file of the image: where it goes, and where it comes from.
	files := map[string]string{"/fifobridge": b.bin, "/true": b.tools["busybox"]}
	if b.before != "" {
		files["/fifobridge-before"], img.before = b.before, true
	}
	if tini := b.tools["tini-static"]; tini != "" && isStatic(tini) {
		files["/tini"], img.tini = tini, true
	}
	if err := addShell(files, b.tools["sh"]); err != nil {
		return nil, err
	}
	dockerfile := "FROM scratch\n"
	n := 0
	for to, from := range files {
		data, err := os.ReadFile(from)
		if err != nil {
			return nil, err
		}
		n++
		name := fmt.Sprintf("f%d", n)
		if err := os.WriteFile(filepath.Join(ctxDir, name), data, 0o755); err != nil {
			return nil, err
		}
		dockerfile += fmt.Sprintf("COPY %s %s\n", name, to)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return nil, err
	}
	if _, err := dockerCmd("build", "-q", "--label", dockerLabel+"="+img.tag, "-t", img.tag, ctxDir); err != nil {
		return nil, err
	}
	return img, nil
}

// imageShell is where the image has the host's sh (the sessions part's
// shell, which runs the same binary in the container as on the host).
const imageShell = "/bin/sh"

// addShell adds to files the host's shell at sh, as imageShell, and the
// libraries it loads (as ldd names them, at the same paths), so that it
// runs in an image FROM scratch.
func addShell(files map[string]string, sh string) error {
	files[imageShell] = sh
	if isStatic(sh) {
		return nil
	}
	out, err := exec.Command("ldd", sh).Output()
	if err != nil {
		return fmt.Errorf("ldd %s (the sessions part puts it into the image): %w", sh, err)
	}
	for _, f := range strings.Fields(string(out)) {
		if filepath.IsAbs(f) {
			files[f] = f
		}
	}
	return nil
}

// remove removes every container the run labelled, then the image.
func (img *dockerImage) remove() error {
	ids, err := dockerCmd("ps", "-aq", "--filter", "label="+dockerLabel+"="+img.tag)
	if err != nil {
		return err
	}
	if ids != "" {
		if _, err := dockerCmd(append([]string{"rm", "-f", "-v"}, strings.Fields(ids)...)...); err != nil {
			return err
		}
	}
	_, err = dockerCmd("rmi", img.tag)
	return err
}

// dockerRun is `docker run` of the image, labelled, without a network.
func (img *dockerImage) runArgs(flags ...string) []string {
	return append([]string{"run", "--network", "none", "--label", dockerLabel + "=" + img.tag}, flags...)
}

// timed runs argv and returns how long it took; it must exit 0.
func timed(argv ...string) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	err := waitOrKill(cmd, dockerTimeout)
	took := time.Since(begin)
	if err != nil {
		return 0, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return took, nil
}
