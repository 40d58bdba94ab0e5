//go:build linux

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The images of the Kubernetes example, built for podman FROM scratch (no
// image is pulled) from the binary under test and a static busybox, and
// tagged in podman's storage with the names the pod file uses.

// podImage is one image the pod file names.
type podImage struct {
	name       string // as the pod file writes it
	tag        string // the name it has in podman's storage
	dockerfile string // how the test builds it; BASE is the fifobridge image
}

// podImages are the images of deploy/kubernetes/pod.yaml. The agent's is
// the fifobridge image (the repository Dockerfile's local target) with the
// CLI added, as the README tells a user to build it; the CLI is my-cli.
var podImages = []podImage{
	{"registry.example.com/my-cli-with-fifobridge:1.0", "registry.example.com/my-cli-with-fifobridge:1.0",
		"FROM BASE\nCOPY bin /bin/\nCOPY my-cli /usr/local/bin/my-cli\n"},
	{"registry.example.com/my-server-with-fifobridge:1.0", "registry.example.com/my-server-with-fifobridge:1.0",
		"FROM BASE\nCOPY bin /bin/\n"},
	{"busybox:1.36", "docker.io/library/busybox:1.36", "FROM scratch\nCOPY bin /bin/\n"},
}

// myCLI stands in for the example's CLI: "my-cli --print" prints one
// answer to the prompt on its stdin, naming the user it runs as.
const myCLI = `#!/bin/sh
[ "$1" = --print ] || { echo "usage: my-cli --print" >&2; exit 2; }
read -r prompt
echo "answer as $(id -u):$(id -g): $prompt"
`

// buildPodImages builds the pod's images and removes them when t ends,
// giving back their names to the images that had them before.
func (p *podman) buildPodImages(t *testing.T) {
	t.Helper()
	staticBusybox := requireStaticBusybox(t)
	before := map[string]string{}
	for _, img := range podImages {
		if res, err := p.cmd(dockerTimeout, "image", "inspect", "--format", "{{.Id}}", img.tag); err == nil && res.code == 0 {
			before[img.tag] = strings.TrimSpace(res.stdout)
		}
	}
	var built []string // the pod's images, then the fifobridge image
	t.Cleanup(func() {
		if len(built) > 0 {
			if res, err := p.cmd(dockerTimeout, append([]string{"rmi"}, built...)...); err != nil || res.code != 0 {
				t.Errorf("podman rmi %v: %v %s", built, err, res.stderr)
			}
		}
		for tag, id := range before {
			if res, err := p.cmd(dockerTimeout, "tag", id, tag); err != nil || res.code != 0 {
				t.Errorf("give %s back to image %s: %v %s", tag, id, err, res.stderr)
			}
		}
	})

	baseCtx := t.TempDir()
	copyFile(t, agentBin, filepath.Join(baseCtx, "fifobridge"), 0o755)
	dockerfile, err := filepath.Abs("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("localhost/fifobridge-test:%d-%d", os.Getpid(), time.Now().UnixNano())
	baseID := p.build(t, base, "--target", "local", "-f", dockerfile, baseCtx)
	built = append(built, baseID)

	ctx := busyboxContext(t, staticBusybox)
	writeFile(t, filepath.Join(ctx, "my-cli"), myCLI)
	if err := os.Chmod(filepath.Join(ctx, "my-cli"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	for i, img := range podImages {
		file := filepath.Join(files, fmt.Sprintf("Containerfile.%d", i))
		writeFile(t, file, strings.ReplaceAll(img.dockerfile, "BASE", base))
		built = slices.Insert(built, 0, p.build(t, img.tag, "-f", file, ctx))
	}
}

// build runs podman build with ARGS, tagging the image tag, and returns
// its id.
func (p *podman) build(t *testing.T, tag string, args ...string) string {
	t.Helper()
	res, err := p.cmd(5*time.Minute, append([]string{"build", "-q", "--layers=false", "--format", "docker", "-t", tag}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(res.stdout)
	if res.code != 0 || len(lines) == 0 {
		t.Fatalf("podman build -t %s %s exited with %d:\n%s%s", tag, strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	return lines[len(lines)-1]
}

// busyboxContext returns a build context holding bin/: the static busybox
// and a link to it for each of its applets, so that no RUN step (which
// would need the runtime) installs them.
func busyboxContext(t *testing.T, staticBusybox string) string {
	t.Helper()
	ctx := t.TempDir()
	bin := filepath.Join(ctx, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, staticBusybox, filepath.Join(bin, "busybox"), 0o755)
	out, err := exec.Command(staticBusybox, "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(bin, applet)); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}
