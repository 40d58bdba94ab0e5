//go:build !linux

// fifobridge is a Linux program: a container's init, it stands on
// subreapers, pidfds, cgroups, pseudo-terminals and splice(2), which other
// systems do not have. Every other file of the command is for Linux
// alone, so that a build for another GOOS stops here with one line
// instead of at every Linux call of the packages it imports.

package main

func main() { fifobridge_builds_for_GOOS_linux_only() }
