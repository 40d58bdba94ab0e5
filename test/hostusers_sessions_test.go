//go:build linux

package test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHostUsersSessions: in the group-owned directories of the README and
// the Kubernetes example, a user of the directory's group who is not root
// opens a session, asks it (its FIFOs are the group's, as DIR's own are),
// lists and closes it; a stranger's open is refused with one line and
// starts nothing. The FIFOs of a session get DIR's group, as DIR's own
// FIFOs do in a setgid directory.
func TestHostUsersSessions(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	for _, cred := range []*syscall.Credential{member, stranger} {
		requireReachable(t, cred)
	}
	for _, s := range hostSetups {
		if s.admits(stranger) {
			continue // the setups that keep strangers out
		}
		t.Run(s.name, func(t *testing.T) {
			checkLeaks(t, false)
			flags := append([]string{"-mode", "sessions", "-prompt", `^\$ $`, "-stderr", "out"}, s.flags...)
			a := startAgent(t, agentConfig{dir: s.makeDir(t), flags: flags, env: []string{"PS1=$ "}, program: []string{busybox, "sh", "-i"}})
			a.waitStatus("running", func(st status) bool { return st.State == "running" })
			run := func(cred *syscall.Credential, want int, args ...string) hostResult {
				t.Helper()
				res := runAs(t, cred, nil, append(args[:1:1], append([]string{"-dir", a.dir}, args[1:]...)...)...)
				if res.code != want {
					t.Fatalf("fifobridge %q as %s exited %d, want %d; stdout %q stderr:\n%s", args, who(cred), res.code, want, res.stdout, res.stderr)
				}
				return res
			}
			run(member, 0, "open", "-tty", "m1")
			for _, name := range []string{"", "in", "out", "ask", "winsize"} {
				fi, err := os.Lstat(filepath.Join(a.dir, "sessions", "m1", name))
				if err != nil {
					t.Fatal(err)
				}
				if gid := fi.Sys().(*syscall.Stat_t).Gid; int(gid) != s.group {
					t.Errorf("DIR/sessions/m1/%s has group %d, want DIR's %d (mode %v)", name, gid, s.group, fi.Mode())
				}
			}
			if res := run(member, 0, "ask", "-session", "m1", "echo $((6 * 7))"); res.stdout != "42\n" {
				t.Fatalf("ask -session m1 as the member printed %q, want 42", res.stdout)
			}
			if res := run(member, 0, "ls"); !strings.HasPrefix(res.stdout, "m1 ") {
				t.Fatalf("ls as the member printed %q, want m1's line", res.stdout)
			}
			run(member, 0, "health", "-session", "m1")
			res := run(stranger, 125, "open", "s1")
			requireOneLine(t, "open as a stranger", res.stderr)
			run(stranger, 125, "ask", "-session", "m1", "echo no")
			run(member, 0, "close", "m1")
			if ents, err := os.ReadDir(filepath.Join(a.dir, "sessions")); err != nil || len(ents) > 0 {
				t.Fatalf("DIR/sessions after the close: %v, %v", ents, err)
			}
			requireNoReplies(t, a.dir)
		})
	}
}
