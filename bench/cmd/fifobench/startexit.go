//go:build linux

package main

import (
	"path/filepath"
	"strconv"
)

const startMetric = "start and exit of `true`, p50 (µs)"

// The start-and-exit contenders besides fifobridge.
const (
	bareTrue = "true"
	goInit   = "minimal Go init"
)

// startArgv is how each start contender runs `true`; nil when it is
// missing.
func (b *bench) startArgv(name string) []string {
	t := b.tools["true"]
	switch name {
	case bareTrue:
		return []string{t}
	case goInit:
		return []string{b.goinit, t}
	case "tini":
		return b.ifTool("tini", "-s", "--", t)
	case "dumb-init":
		return b.ifTool("dumb-init", t)
	case "catatonit":
		return b.ifTool("catatonit", "--", t)
	case bridge, bridgeBefore:
		dir := filepath.Join(b.work, "start")
		return []string{b.binOf(name), "run", "-dir", dir, "-restart", "never", "-log-level", "error", "--", t}
	}
	return nil
}

func (b *bench) ifTool(tool string, args ...string) []string {
	if b.tools[tool] == "" {
		return nil
	}
	return append([]string{b.tools[tool]}, args...)
}

var startContenders = []string{bareTrue, goInit, "tini", "dumb-init", "catatonit", bridge, bridgeBefore}

// startExit times b.spawns starts of `true` under every init, each forked
// and waited for by the client in the same way, unpinned.
func startExit(b *bench, round int, r *results) error {
	for _, name := range rotate(b.have(startContenders, r), round) {
		argv := b.startArgv(name)
		if argv == nil {
			r.note("%s: skipped (not installed)", name)
			continue
		}
		args := append([]string{"-m", "spawn", "-n", strconv.Itoa(b.spawns), "-w", "5", "--"}, argv...)
		us, err := b.samples(unpinned, args...)
		if err != nil {
			return err
		}
		r.add(startMetric, name, percentile(us, 50))
	}
	return nil
}
