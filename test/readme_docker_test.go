//go:build linux

package test

import (
	"fmt"
	"github.com/fifobridge/fifobridge/internal/testgate"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// readmeImages are the images the README's examples start from: the
// Dockerfile's local target, and a stand-in for the reader's CLI image
// (that image plus a static busybox), made as the README makes them.
var readmeImages = []string{"fifobridge:local", "my-cli"}

// readmeDocker is the Docker side of TestREADME. A docker wrapper first on
// the examples' PATH adds the test's label to every container, volume and
// image they create, so that the test finds exactly those: it requires
// that no container or volume is left after each example, and removes the
// images when TestREADME ends.
type readmeDocker struct {
	label  string // dockerLabel=VALUE
	bin    string // the examples' PATH directory, where the wrapper goes
	tried  bool   // prepare ran (in the first example that needs docker)
	engine bool   // a Docker engine answers
	ready  bool   // and the images are built
}

// newReadmeDocker returns the Docker side of t, whose images are removed
// when t ends.
func newReadmeDocker(t *testing.T, bin string) *readmeDocker {
	d := &readmeDocker{label: dockerLabel + "=" + marker(t), bin: bin}
	t.Cleanup(func() { d.removeImages(t) })
	return d
}

// require skips t (fails it with FIFOBRIDGE_REQUIRE_PRIVILEGED=1) unless a
// Docker engine answers; the first time, it also writes the wrapper and
// builds the images the README names from the binary under test. It
// checks, when t ends, that the example left no container or volume.
func (d *readmeDocker) require(t *testing.T) {
	t.Helper()
	if d.tried && !d.ready {
		if raceBuild {
			t.Skip("the race-built binary needs the C library, which the scratch image lacks; the README's docker examples run in the static build's run")
		}
		testgate.Skip(t, "no Docker engine or images: see the first example that runs docker")
	}
	if !d.tried {
		d.tried = true
		d.prepare(t)
	}
	t.Cleanup(func() { d.requireNothingLeft(t) })
}

// prepare writes the wrapper and builds the images.
func (d *readmeDocker) prepare(t *testing.T) {
	t.Helper()
	requireDocker(t)
	d.engine = true
	if raceBuild {
		t.Skip("the race-built binary needs the C library, which the scratch image lacks; the README's docker examples run in the static build's run")
	}
	staticBusybox := requireStaticBusybox(t)
	real, err := exec.LookPath("docker")
	if err != nil {
		t.Fatal(err)
	}
	d.writeWrapper(t, real)
	d.refuseForeignImages(t)

	ctxDir := t.TempDir()
	copyFile(t, agentBin, filepath.Join(ctxDir, "fifobridge"), 0o755)
	build(t, "--label", d.label, "--target", "local", "-f", "../Dockerfile", "-t", readmeImages[0], ctxDir)
	cliDir := t.TempDir()
	copyFile(t, staticBusybox, filepath.Join(cliDir, "busybox"), 0o755)
	writeFile(t, filepath.Join(cliDir, "Dockerfile"), "FROM "+readmeImages[0]+"\n"+
		"COPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n")
	build(t, "--label", d.label, "-t", readmeImages[1], cliDir)
	d.ready = true
}

// writeWrapper writes docker into the examples' PATH directory: the real docker, labelling what run,
// create, build and volume create make.
func (d *readmeDocker) writeWrapper(t *testing.T, real string) {
	t.Helper()
	script := fmt.Sprintf(`#!/bin/sh
# docker as TestREADME runs it: what the examples create carries its label.
case $1 in
run|create|build) cmd=$1; shift; exec '%[1]s' "$cmd" --label '%[2]s' "$@" ;;
volume) [ "$2" = create ] && { shift 2; exec '%[1]s' volume create --label '%[2]s' "$@"; } ;;
esac
exec '%[1]s' "$@"
`, real, d.label)
	if err := writeUnforked(filepath.Join(d.bin, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// refuseForeignImages fails (or skips) t when an image the README names
// exists and was not made by a test: the examples would replace it.
func (d *readmeDocker) refuseForeignImages(t *testing.T) {
	t.Helper()
	for _, image := range readmeImages {
		res, err := dockerCmd(dockerTimeout, "image", "inspect", "-f", `{{index .Config.Labels "`+dockerLabel+`"}}`, image)
		if err != nil {
			t.Fatal(err)
		}
		if v := strings.TrimSpace(res.stdout); res.code == 0 && (v == "" || v == "<no value>") {
			why := fmt.Sprintf("the README's examples would replace the image %s, which no test made", image)
			testgate.Skip(t, "%s", why)
		}
	}
}

// requireNothingLeft fails t when a container or volume an example made is
// still there once it has ended, and removes it.
func (d *readmeDocker) requireNothingLeft(t *testing.T) {
	t.Helper()
	filter := "label=" + d.label
	var containers []string
	// A container run with --rm is removed just after it ends.
	eventually(15*time.Second, func() bool {
		containers = listIDs(t, "ps", "-aq", "--filter", filter)
		return len(containers) == 0
	})
	if len(containers) > 0 {
		t.Errorf("the example left containers: %v", containers)
		docker(t, append([]string{"rm", "-f", "-v"}, containers...)...)
	}
	if volumes := listIDs(t, "volume", "ls", "-q", "--filter", filter); len(volumes) > 0 {
		t.Errorf("the example left volumes: %v", volumes)
		docker(t, append([]string{"volume", "rm", "-f"}, volumes...)...)
	}
}

// removeImages removes every image with the test's label.
func (d *readmeDocker) removeImages(t *testing.T) {
	t.Helper()
	if !d.engine {
		return
	}
	filter := "label=" + d.label
	dockerImages.Lock() // see dockerImages
	defer dockerImages.Unlock()
	// An image another one is built FROM cannot go before it: each round
	// removes what it can, until nothing is left or a round removes nothing.
	for prev := -1; ; {
		images := slices.Compact(slices.Sorted(slices.Values(listIDs(t, "images", "-q", "--filter", filter))))
		if len(images) == 0 || len(images) == prev {
			break
		}
		prev = len(images)
		for _, id := range images {
			exec.Command("docker", "rmi", "-f", id).Run() // a dependent's parent fails this round
		}
	}
	if left := listIDs(t, "images", "-aq", "--filter", filter); len(left) > 0 {
		t.Errorf("images of the README test left after it: %v", left)
	}
}
