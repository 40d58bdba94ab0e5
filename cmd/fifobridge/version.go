//go:build linux

package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func versionString() string {
	v := version
	if v == "" {
		v = "devel"
		if bi, ok := debug.ReadBuildInfo(); ok {
			if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v += "+" + s.Value[:12]
				}
			}
		}
	}
	return fmt.Sprintf("fifobridge %s %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
