//go:build linux

package test

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// The README's fenced code blocks follow one convention, which
// readmeBlocks enforces:
//
//   - ```sh: a shell example that runs as written. TestREADME runs each as
//     a script of its own with "sh -e", in a fresh temporary directory
//     (also $TMPDIR, so mktemp -d makes its directories there), with the
//     binary under test first on PATH. A block whose first line is
//     readmeCheckout runs in the checkout instead.
//   - ```text, ```dockerfile, ```yaml, ```json: shown, not run (the test
//     command itself, commands that need images the reader has to supply,
//     files).
//
// Any other fence (```bash, ```shell, a bare ```) is an error, so that no
// shell example escapes the test by its tag.

// readmeCheckout is the first line of a block that runs in a checkout of
// the repository (go install ./cmd/fifobridge, docker build -f Dockerfile).
const readmeCheckout = "# in a checkout of this repository"

// readmeShown are the fence tags of blocks that are shown, not run.
var readmeShown = map[string]bool{"text": true, "dockerfile": true, "yaml": true, "json": true}

// usesDocker matches a block that runs the docker command.
var usesDocker = regexp.MustCompile(`(?m)(^|[\s;&|(])docker\s`)

// readmeBlock is one runnable example of the README.
type readmeBlock struct {
	line    int    // line of its opening fence
	heading string // the heading it is under
	script  string
}

// name is the block's subtest name: its heading and line.
func (b readmeBlock) name() string {
	h := strings.Trim(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(b.heading, "_"), "_")
	return fmt.Sprintf("%s/line%d", h, b.line)
}

// inCheckout reports whether the block runs in the repository checkout.
func (b readmeBlock) inCheckout() bool {
	first, _, _ := strings.Cut(b.script, "\n")
	return strings.TrimSpace(first) == readmeCheckout
}

// docker reports whether the block needs a Docker engine.
func (b readmeBlock) docker() bool { return usesDocker.MatchString(b.script) }

// readmeBlocks returns the ```sh blocks of the Markdown file at path, in
// order, and an error for a fence tag outside the convention or a block
// that is not closed.
func readmeBlocks(path string) ([]readmeBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks  []readmeBlock
		heading string
		cur     *readmeBlock // the sh block being read
		inFence bool
		fence   int // line of the open fence
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case inFence && strings.TrimSpace(line) == "```":
			inFence = false
			if cur != nil {
				blocks = append(blocks, *cur)
				cur = nil
			}
		case inFence:
			if cur != nil {
				cur.script += line + "\n"
			}
		case strings.HasPrefix(line, "```"):
			inFence, fence = true, n
			tag, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "```")), " ")
			switch {
			case tag == "sh":
				cur = &readmeBlock{line: n, heading: heading}
			case !readmeShown[tag]:
				return nil, fmt.Errorf("%s:%d: fence %q: shell examples are ```sh (run by TestREADME), others ```text", path, n, line)
			}
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if inFence {
		return nil, fmt.Errorf("%s:%d: code block not closed", path, fence)
	}
	return blocks, nil
}
