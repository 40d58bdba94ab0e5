//go:build linux

package child

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ExitStatus is how a process ended. The zero value is a clean exit.
type ExitStatus struct {
	ws unix.WaitStatus
}

// Code is the exit code, or 128+N for a process killed by signal N, the
// convention of shells, tini and docker.
func (s ExitStatus) Code() int {
	if s.ws.Signaled() {
		return 128 + int(s.ws.Signal())
	}
	return s.ws.ExitStatus()
}

// Signal is the signal that killed the process, or 0.
func (s ExitStatus) Signal() syscall.Signal {
	if s.ws.Signaled() {
		return s.ws.Signal()
	}
	return 0
}

// Signaled is the status of a process ended by sig, for a process that was
// given up on before it could be reaped.
func Signaled(sig syscall.Signal) ExitStatus { return ExitStatus{ws: unix.WaitStatus(sig)} }

// Success reports a zero exit code.
func (s ExitStatus) Success() bool { return s.Code() == 0 }

func (s ExitStatus) String() string {
	if sig := s.Signal(); sig != 0 {
		return fmt.Sprintf("killed by signal %s (%d)", SignalName(sig), s.Code())
	}
	return fmt.Sprintf("exit code %d", s.Code())
}

// SignalName is the short name of sig, such as "TERM", or "" for 0.
func SignalName(sig syscall.Signal) string {
	if sig == 0 {
		return ""
	}
	name := unix.SignalName(sig)
	if name == "" {
		return fmt.Sprintf("%d", int(sig))
	}
	return strings.TrimPrefix(name, "SIG")
}

// ParseSignal accepts "TERM", "SIGTERM", "term" or a number.
func ParseSignal(s string) (syscall.Signal, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if v, err := strconv.Atoi(name); err == nil {
		if v > 0 && v < 65 {
			return syscall.Signal(v), nil
		}
		return 0, fmt.Errorf("parse signal %q: out of range", s)
	}
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("parse signal %q: unknown signal", s)
}
