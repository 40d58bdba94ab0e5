package child

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// LookPath finds program as a shell would for a child run as cred (nil:
// the agent's own user): a name with a slash is taken as it is, any other
// is looked up on PATH. Unlike exec.LookPath it tells a program that is
// there but not executable for that user (an error wrapping EACCES: exit
// 126) from one that is nowhere (exec.ErrNotFound or ENOENT: 127). On
// PATH, an entry the user cannot see (a directory it may not search) is
// passed over, as a shell does: only a file found there and not runnable
// is 126.
//
// The kernel answers for the child: with cred, the checks run on a thread
// that has the child's credentials (asUser), so a directory on the way
// that the child may not search refuses, as its execve(2) would. A
// script's #! interpreter is checked the same way, one level deep (the
// kernel follows an interpreter that is itself a script a few levels
// more; such a chain is left to the start): a missing interpreter is
// ENOENT (127, as execve(2) reports it, and docker run), one the child
// may not execute EACCES (126).
func LookPath(program string, cred *syscall.Credential) (path string, err error) {
	return lookPathIn(program, search{path: os.Getenv("PATH")}, cred)
}

// lookPathFor is LookPath of spec's program as its child will run it: for
// spec's user, on the PATH of spec's environment (the agent's when it
// sets none), and a relative name, or PATH entry, taken from spec's
// directory, where the child's execve(2) resolves it. The path it returns
// is then absolute.
func lookPathFor(spec *Spec) (string, error) {
	s := search{path: os.Getenv("PATH"), dir: spec.Dir}
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			s.path = v // the last one, as the child's getenv(3) sees it
		}
	}
	return lookPathIn(spec.Program, s, spec.Credential)
}

// search is where a lookup looks: path is the PATH list, dir, if set, the
// directory relative names are taken from ("": the agent's own).
type search struct{ path, dir string }

// lookPathIn is LookPath on s.
func lookPathIn(program string, s search, cred *syscall.Credential) (path string, err error) {
	if cred == nil {
		return lookPath(program, s, unix.AT_EACCESS)
	}
	// The thread's real ids are the child's: access(2) without
	// AT_EACCESS, which works on every kernel, asks for them.
	if terr := asUser(cred, func() { path, err = lookPath(program, s, 0) }); terr != nil {
		return "", terr
	}
	if err != nil {
		return "", fmt.Errorf("%w (for uid %d)", err, cred.Uid)
	}
	return path, nil
}

// lookPath is LookPath on s with the calling thread's credentials;
// accessFlags are faccessat(2)'s. A directory s.dir that the thread may
// not enter fails it, with the directory named.
func lookPath(program string, s search, accessFlags int) (string, error) {
	from := func(p string) string {
		if s.dir != "" && !filepath.IsAbs(p) {
			return filepath.Join(s.dir, p)
		}
		return p
	}
	if s.dir != "" {
		// The child changes into it before its execve(2), whose error
		// would then name the program for what is the directory's.
		if err := unix.Faccessat(unix.AT_FDCWD, s.dir, unix.X_OK, accessFlags); err != nil {
			return "", fmt.Errorf("working directory %s: %w", s.dir, err)
		}
	}
	if strings.Contains(program, "/") {
		return from(program), executable(from(program), accessFlags)
	}
	denied := ""
	for _, dir := range filepath.SplitList(s.path) {
		if dir == "" {
			dir = "."
		}
		path := from(filepath.Join(dir, program))
		var st unix.Stat_t
		if unix.Stat(path, &st) != nil {
			// Nothing there that this user can see, a directory on the
			// way it may not search included: the search goes on, as a
			// stream child's start (exec.LookPath) and a shell's do.
			continue
		}
		err := executable(path, accessFlags)
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

// executable returns nil when execve(2) of path would find a regular file
// it may run, and, for a script, an interpreter it may run; an error
// wrapping ENOENT when there is nothing (a missing directory on the way
// included), EACCES when it may not, another errno (ENOTDIR, ELOOP) as
// the kernel gives it.
func executable(path string, accessFlags int) error {
	if err := runnable(path, accessFlags); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	interp, ok := interpreter(path)
	if !ok {
		return nil
	}
	if err := runnable(interp, accessFlags); err != nil {
		return fmt.Errorf("%s: bad interpreter %s: %w", path, interp, err)
	}
	return nil
}

// runnable is the check of one file: a regular file whose execute
// permission the calling thread has. Its error is a bare errno.
func runnable(path string, accessFlags int) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("not a regular file: %w", unix.EACCES)
	}
	if err := unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, accessFlags); err != nil {
		return fmt.Errorf("no permission to execute: %w", unix.EACCES)
	}
	return nil
}

// interpreter returns the interpreter of the script at path, as the
// kernel reads its #! line: after "#!" and blanks, up to a blank or the
// end of the line, within the first shebangMax bytes. ok is false for a
// file that is no script, and for one the calling thread may not read:
// its interpreter, which opens it by name, could not either, and reports
// that itself.
func interpreter(path string) (interp string, ok bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	buf := make([]byte, shebangMax)
	n, err := unix.Read(fd, buf)
	if err != nil || n < 2 || string(buf[:2]) != "#!" {
		return "", false
	}
	line := strings.TrimLeft(string(buf[2:n]), " \t")
	end := strings.IndexAny(line, " \t\n")
	if end < 0 && n < shebangMax {
		end = len(line) // the file ends with its #! line
	}
	if end <= 0 {
		// No interpreter, or one cut off by the limit: the start
		// reports what the kernel says.
		return "", false
	}
	return line[:end], true
}

// shebangMax is how much of a script the kernel reads for its #! line
// (BINPRM_BUF_SIZE).
const shebangMax = 256
