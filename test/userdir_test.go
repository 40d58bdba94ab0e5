//go:build linux

package test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUserMadeDir: with -user and every other flag at its default, the DIR
// the agent makes itself lets the child's user neither write DIR/in nor
// make a reply FIFO in DIR/replies, and the agent does not warn. Made for
// a child in the agent's own group, DIR lets it in: then it can make reply
// FIFOs and write DIR/in (-perm 0660), and the start-up warning says so.
func TestUserMadeDir(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	bin := sharedBin(t)
	cases := []struct {
		name  string
		user  string
		grant bool // the child can reach replies/
	}{
		{"OtherGroup", fmt.Sprintf("%d:%d", nobody, nobody), false},
		{"AgentsGroup", fmt.Sprintf("%d:%d", nobody, os.Getegid()), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, false)
			dir := filepath.Join(sharedTemp(t), "fb")
			a, w, r := startExec(t, agentConfig{dir: dir, helper: "probe", program: []string{bin},
				flags: []string{"-user", tc.user, "-allow-args"}})
			defer w.close()
			defer r.close()
			probe := func(args ...string) string {
				t.Helper()
				b, _ := json.Marshal(args)
				w.writeLine(fmt.Sprintf(`{"id":"probe","args":%s}`, b))
				resp := nextResponse(t, r)
				if resp.exit == nil {
					t.Fatalf("probe %q did not run:%s", args, resp)
				}
				return strings.TrimSpace(string(resp.stdout))
			}
			fifo := probe("mkfifo", filepath.Join(dir, "replies", "probe"))
			in := probe("write", a.in)
			if tc.grant {
				// -perm 0660 lets the agent's group write DIR/in, too.
				if fifo != "ok" || in != "ok" {
					t.Errorf("the child in the agent's group making a reply FIFO: %q, writing DIR/in: %q; want ok (the test needs the grants)", fifo, in)
				}
				for _, w := range []string{"can make reply FIFOs", "can write the input FIFO"} {
					if !strings.Contains(a.stderr(), w) {
						t.Errorf("no warning that the child %s:\n%s", w, a.stderr())
					}
				}
				return
			}
			if !strings.Contains(in, "permission denied") {
				t.Errorf("the child (%s) opening DIR/in for writing: %q, want permission denied", tc.user, in)
			}
			if !strings.Contains(fifo, "permission denied") {
				t.Errorf("the child (%s) making a reply FIFO: %q, want permission denied", tc.user, fifo)
			}
			if strings.Contains(a.stderr(), "-user:") {
				t.Errorf("the agent warned of a grant nobody made:\n%s", a.stderr())
			}
			fi, err := os.Stat(dir)
			if err != nil || fi.Mode().Perm() != 0o750 {
				t.Errorf("DIR made by the agent: %v (%v), want mode 0750", fi.Mode(), err)
			}
		})
	}
}
