//go:build linux

package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The podman test's adaptation to machines where runc may not set rlimits:
// podman asks for RLIMIT_NOFILE and others above the hard limits this
// process has, which needs CAP_SYS_RESOURCE; without it (a container or VM
// that drops it) runc fails every start with "error setting rlimits". The
// test then hands podman a runtime that drops process.rlimits from the
// bundle's config.json and runs runc: the containers inherit the limits
// they would be refused. With the capability, podman runs runc as it is.

// capSysResource is CAP_SYS_RESOURCE's bit in /proc/PID/status's CapEff.
const capSysResource = 24

// podmanRuntime returns podman's global flags that choose the OCI runtime
// for this machine: none when this process may set rlimits, else
// --runtime with a wrapper script that runs the test binary's
// runc-norlimits helper before runc.
func podmanRuntime(t *testing.T) []string {
	t.Helper()
	if hasCap(t, capSysResource) {
		return nil
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		t.Fatalf("podman's containers need runc (Debian: apt-get install runc): %v", err)
	}
	script := filepath.Join(t.TempDir(), "runc-norlimits")
	writeFile(t, script, fmt.Sprintf("#!/bin/sh\n%s=runc-norlimits exec '%s' '%s' \"$@\"\n", helperEnv, selfBin, runc))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("no CAP_SYS_RESOURCE: podman runs %s, which drops the containers' rlimits", script)
	return []string{"--runtime", script}
}

// hasCap reports whether capability bit c is in this process's effective
// set.
func hasCap(t *testing.T, c uint) bool {
	t.Helper()
	eff, err := strconv.ParseUint(procStatus(t, os.Getpid())["CapEff"], 16, 64)
	if err != nil {
		t.Fatalf("parse CapEff: %v", err)
	}
	return eff&(1<<c) != 0
}

// runc-norlimits RUNC ARG...: run RUNC ARG... after removing
// process.rlimits from the config.json of the bundle that ARG names, when
// it creates or runs a container.
func helperRuncNoRlimits(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "runc-norlimits: no runc path")
		return 2
	}
	runc, args := args[0], args[1:]
	if bundle, ok := runcBundle(args); ok {
		if err := dropRlimits(filepath.Join(bundle, "config.json")); err != nil {
			fmt.Fprintf(os.Stderr, "runc-norlimits: %v\n", err)
			return 1
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, helperEnv+"=") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(runc, append([]string{runc}, args...), env)
	fmt.Fprintf(os.Stderr, "runc-norlimits: exec %s: %v\n", runc, err)
	return 1
}

// runcBundle returns the bundle directory of a runc create or run command
// line: its --bundle (-b) value, or the working directory.
func runcBundle(args []string) (string, bool) {
	creates := false
	for i, a := range args {
		switch {
		case (a == "--bundle" || a == "-b") && i+1 < len(args):
			return args[i+1], true
		case strings.HasPrefix(a, "--bundle="):
			return strings.TrimPrefix(a, "--bundle="), true
		case a == "create" || a == "run":
			creates = true
		}
	}
	return ".", creates
}

// dropRlimits removes process.rlimits from the OCI config at path, keeping
// everything else as it was.
func dropRlimits(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var config map[string]json.RawMessage
	if err := json.Unmarshal(b, &config); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	var process map[string]json.RawMessage
	if err := json.Unmarshal(config["process"], &process); err != nil {
		return fmt.Errorf("parse process of %s: %w", path, err)
	}
	if _, ok := process["rlimits"]; !ok {
		return nil
	}
	delete(process, "rlimits")
	if config["process"], err = json.Marshal(process); err != nil {
		return err
	}
	if b, err = json.Marshal(config); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
