//go:build linux

package test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMETestCommand: the test command the README gives is the one
// docs/testing.md gives and the one CI runs (.ci/run, through
// .ci/hostile, whose default it is), and it bounds itself with -timeout: without one, go test's
// default of ten minutes ends the black-box suite half way on a busy
// machine.
func TestREADMETestCommand(t *testing.T) {
	t.Parallel()
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// The first block shown under a heading.
	shown := func(path, heading string) string {
		t.Helper()
		m := regexp.MustCompile("(?ms)^#+ " + regexp.QuoteMeta(heading) + "$.*?^```text\n(.*?)\n```").FindStringSubmatch(read(path))
		if m == nil {
			t.Fatalf("%s: no ```text block under %q", path, heading)
		}
		return m[1]
	}
	cmd := shown("../README.md", "Running the tests")
	if !strings.HasPrefix(cmd, "go test ") || strings.Contains(cmd, "\n") {
		t.Fatalf("README.md's test command is %q, want one go test line", cmd)
	}
	if !regexp.MustCompile(`(^| )-timeout [0-9]+m( |$)`).MatchString(cmd) {
		t.Errorf("README.md's test command %q has no -timeout of minutes: go test's default would end it at ten", cmd)
	}
	if doc := shown("../docs/testing.md", "Tests and CI"); doc != cmd {
		t.Errorf("docs/testing.md gives the test command %q, README.md %q", doc, cmd)
	}
	// CI runs it once, through .ci/hostile with no arguments.
	if !regexp.MustCompile(`(?m)^step "README test command[^"]*" \.ci/hostile$`).MatchString(read("../.ci/run")) {
		t.Errorf(".ci/run does not run the README's test command: no step \"README test command ...\" .ci/hostile")
	}
	if want := "args=(" + strings.TrimPrefix(cmd, "go test ") + ")"; !strings.Contains(read("../.ci/hostile"), want) {
		t.Errorf(".ci/hostile does not run the README's test command by default: no %q", want)
	}
}
