//go:build linux

package child

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"

	"golang.org/x/sys/unix"
)

// StartError reports a program that could not be started.
type StartError struct {
	Program string
	Err     error
}

func (e *StartError) Error() string { return fmt.Sprintf("start %s: %v", e.Program, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// Code is the exit code shells use for the failure: 127 when the program
// does not exist, 126 when it exists but cannot be executed.
func (e *StartError) Code() int {
	if errors.Is(e.Err, exec.ErrNotFound) || errors.Is(e.Err, fs.ErrNotExist) || errors.Is(e.Err, unix.ENOENT) {
		return 127
	}
	return 126
}
