//go:build linux

package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCgroupOffNoPidsLimit: with -cgroup off the agent gives its children
// no pids limit of its own making. In a cgroup v1 pids cgroup with a
// pids.max (made here), the child stays in the agent's pids cgroup, no
// cgroup is made below it and the log announces no budget; the same
// agent with cgroups ("cgroup", the control) puts its child under a
// budget of its own, so the check sees one where there is one.
func TestCgroupOffNoPidsLimit(t *testing.T) {
	t.Parallel()
	for _, containment := range []string{"off", "cgroup"} {
		t.Run(containment, func(t *testing.T) {
			checkLeaks(t, false)
			v2 := "off"
			if containment == "cgroup" {
				v2 = testCgroup(t)
			}
			cg := testPidsCgroup(t, 300)
			a := startAgent(t, agentConfig{
				program: []string{busybox, "sleep", "1000"},
				flags:   []string{"-cgroup", v2},
				// The shell stays, so that the harness finds the agent as its child.
				wrap: []string{"/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && "$@"`, cg},
			})
			pid := a.hostPID(a.waitChild())
			childCg := hostPidsCgroup(t, pid)
			var below []string
			ents, err := os.ReadDir(cg)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.IsDir() {
					below = append(below, e.Name())
				}
			}
			budget := strings.Contains(a.stderr(), "pids budget")
			if containment == "off" {
				if childCg != cg || len(below) > 0 || budget {
					t.Fatalf("-cgroup off: the child runs in pids cgroup %s (the agent's: %s), cgroups made below it: %v, a budget logged: %v\n%s",
						childCg, cg, below, budget, a.stderr())
				}
			} else if filepath.Dir(childCg) != cg || !budget {
				t.Fatalf("with cgroups: the child runs in pids cgroup %s, want one below %s with a budget (logged: %v)\n%s",
					childCg, cg, budget, a.stderr())
			}
			if code := a.stop(); code != 143 {
				t.Fatalf("agent exited %d, want 143", code)
			}
		})
	}
}
