//go:build linux

// Package cgrouptest gives tests a cgroup v2 directory of their own.
package cgrouptest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fifobridge/fifobridge/internal/testgate"
	"golang.org/x/sys/unix"
)

// Dir makes a cgroup of its own for one test below the test process's
// cgroup, and removes it afterwards. own is cgroup.Own, passed in so that
// package cgroup's own tests can use Dir without an import cycle. Without
// a writable cgroup v2 the test is skipped, or fails with
// FIFOBRIDGE_REQUIRE_PRIVILEGED=1.
func Dir(t testing.TB, own func() (string, error)) string {
	t.Helper()
	base, err := own()
	if err == nil {
		dir := filepath.Join(base, fmt.Sprintf("fbtest-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
		if err = os.Mkdir(dir, 0o755); err == nil {
			t.Cleanup(func() {
				if err := unix.Rmdir(dir); err != nil {
					t.Errorf("remove test cgroup: %v", err)
				}
			})
			return dir
		}
	}
	testgate.Skip(t, "needs a writable cgroup v2: %v", err)
	return ""
}

// Below lists the cgroups directly below dir.
func Below(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// anchorName matches the name of an agent's anchor, the empty cgroup it
// holds locked for its life (see package cgroup).
var anchorName = regexp.MustCompile(`^fifobridge-[0-9]+-[0-9]+-[0-9]+-a[0-9]+$`)

// IsAnchor reports whether name is that of an agent's anchor.
func IsAnchor(name string) bool { return anchorName.MatchString(name) }

// Children lists the cgroups directly below dir other than agents'
// anchors: those of children.
func Children(t testing.TB, dir string) []string {
	t.Helper()
	var names []string
	for _, name := range Below(t, dir) {
		if !IsAnchor(name) {
			names = append(names, name)
		}
	}
	return names
}
