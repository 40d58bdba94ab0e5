package child

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// LookPath finds program as a shell would for a child run as cred (nil:
// the agent's own user): a name with a slash is taken as it is, any other
// is looked up on PATH. Unlike exec.LookPath it tells a program that is
// there but not executable for that user (an error wrapping EACCES: exit
// 126) from one that is nowhere (exec.ErrNotFound or ENOENT: 127).
func LookPath(program string, cred *syscall.Credential) (string, error) {
	if strings.Contains(program, "/") {
		return program, executable(program, cred)
	}
	denied := ""
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		path := filepath.Join(dir, program)
		err := executable(path, cred)
		if err == nil {
			return path, nil
		}
		if errors.Is(err, unix.EACCES) && denied == "" {
			denied = path
		}
	}
	if denied != "" {
		return "", fmt.Errorf("%s: %w", denied, unix.EACCES)
	}
	return "", fmt.Errorf("%q: %w", program, exec.ErrNotFound)
}

// executable returns nil when path is a regular file that cred (nil: the
// agent's user) may execute, ENOENT when there is nothing, and EACCES
// otherwise.
func executable(path string, cred *syscall.Credential) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("%s: %w", path, unix.EACCES)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file: %w", path, unix.EACCES)
	}
	if cred == nil {
		if err := unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS); err != nil {
			return fmt.Errorf("%s: %w", path, unix.EACCES)
		}
		return nil
	}
	st := fi.Sys().(*syscall.Stat_t)
	perm := fi.Mode().Perm()
	var bit os.FileMode
	switch {
	case cred.Uid == 0:
		bit = 0o111 // root may run what anyone may
	case st.Uid == cred.Uid:
		bit = 0o100
	case st.Gid == cred.Gid || slices.Contains(cred.Groups, st.Gid):
		bit = 0o010
	default:
		bit = 0o001
	}
	if perm&bit == 0 {
		return fmt.Errorf("%s: not executable for uid %d: %w", path, cred.Uid, unix.EACCES)
	}
	return nil
}
