//go:build linux

package bridge

import (
	"errors"
	"fmt"
	"github.com/fifobridge/fifobridge/bridge/config"

	"github.com/fifobridge/fifobridge/cgroup"
	"github.com/fifobridge/fifobridge/child"
)

// Containment values of the status file.
const (
	containCgroup = "cgroup"
	containTree   = "tree"
)

// openContainment sets up the cgroups children run in, as -cgroup says:
// "off" none; "auto" the agent's own cgroup when it can make cgroups there,
// else none, with one info line saying why; a directory, which must be a
// cgroup v2 directory the agent can make cgroups in (else a
// *ConfigError). The "serving" line says which is in force. With cgroups, the leftovers of dead agents there are
// ended and removed first. A nil result means the tree stop alone.
func openContainment(cfg *config.Run) (*cgroup.Manager, error) {
	log := cfg.Log
	var (
		m   *cgroup.Manager
		err error
	)
	switch cfg.Cgroup {
	case "off":
		return nil, nil
	case "", "auto":
		var dir string
		if dir, err = cgroup.Own(); err == nil {
			m, err = cgroup.Open(dir, log)
		}
		if err != nil {
			log.Info("containment: process tree; no usable cgroup v2", "why", err.Error())
			return nil, nil
		}
	default:
		if m, err = cgroup.Open(cfg.Cgroup, log); err != nil {
			return nil, &ConfigError{fmt.Errorf("invalid -cgroup: %w", err)}
		}
	}
	m.RemoveLeftovers()
	if n := m.PidsMax(); n > 0 {
		log.Info("each child has a pids budget", "pids_max", n)
	}
	return m, nil
}

// cgroupDir is where m makes cgroups, or "" without cgroups.
func cgroupDir(m *cgroup.Manager) string {
	if m == nil {
		return ""
	}
	return m.Dir()
}

// limitPids gives the children a pids budget in the cgroup v1 pids
// hierarchy where that limits the agent (see child.Reaper.LimitPids); nil when
// there is none to give, or with -cgroup off. (On cgroup v2 the budget is
// each child cgroup's, see cgroup.Manager.)
func limitPids(cfg *config.Run, r *child.Reaper) *cgroup.PidsLimit {
	if cfg.Cgroup == "off" {
		return nil
	}
	l, err := r.LimitPids(cfg.Log)
	if err != nil {
		if !errors.Is(err, cgroup.ErrNoPidsLimit) {
			// A container's cgroup file system is mostly read-only: the
			// thread reserve alone keeps the agent going then.
			cfg.Log.Info("children run without a pids budget", "why", err.Error())
		}
		return nil
	}
	cfg.Log.Info("children share a pids budget", "pids_max", l.Budget(), "cgroup", l.Path())
	return l
}
