//go:build linux

package child

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/stretchr/testify/require"
)

// lookPathCode is the exit code a LookPath error stands for, 0 for none.
func lookPathCode(err error) int {
	if err == nil {
		return 0
	}
	return (&StartError{Err: err}).Code()
}

// lookPathDir makes a directory every user may reach, and returns it and
// a function that writes a file there with a mode, returning its path.
func lookPathDir(t *testing.T) (string, func(name, text string, mode os.FileMode) string) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755)) // other users may reach dir
	return dir, func(name, text string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		require.NoError(t, os.Chmod(path, mode))
		return path
	}
}

// TestLookPath: what LookPath says of a program for the agent's own user:
// 127 for nothing there (a missing #! interpreter included), 126 for what
// may not be run (the program or its interpreter), 0 for what execve(2)
// would run.
func TestLookPath(t *testing.T) {
	leakcheck.Check(t)
	dir, file := lookPathDir(t)
	notExec := file("notexec", "#!/bin/sh\n", 0o644)
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		program string
		want    int
	}{
		{"a script", file("ok", "#!/bin/sh\nexit 0\n", 0o755), 0},
		{"blanks and an argument", file("args", "#! \t/bin/sh -e\nexit 0\n", 0o755), 0},
		{"the file ends with its #! line", file("nonl", "#!"+sh, 0o755), 0},
		{"no #! line", file("plain", "exit 0\n", 0o755), 0},
		{"an empty file", file("empty", "", 0o755), 0},
		{"missing", filepath.Join(dir, "nothing"), 127},
		{"missing directory", filepath.Join(dir, "nodir", "x"), 127},
		{"not executable", notExec, 126},
		{"a directory", t.TempDir(), 126},
		{"interpreter missing", file("nointerp", "#!/nonexistent/sh\n", 0o755), 127},
		// The kernel takes a \r as part of the name: bad interpreter.
		{"interpreter with a CR", file("crlf", "#!/bin/sh\r\nexit 0\r\n", 0o755), 127},
		{"interpreter not executable", file("badinterp", "#!"+notExec+"\n", 0o755), 126},
		{"interpreter a directory", file("dirinterp", "#!"+dir+"\n", 0o755), 126},
		{"on PATH", "sh", 0},
		{"not on PATH", "fifobridge-no-such-program", 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LookPath(tc.program, nil)
			require.Equal(t, tc.want, lookPathCode(err), "LookPath(%q): %v", tc.program, err)
		})
	}
}

// TestLookPathAsUser: as root, LookPath answers for the child's user, its
// groups and the directories on the way, and leaves no thread with the
// child's credentials.
func TestLookPathAsUser(t *testing.T) {
	requireRoot(t, "checking for another user")
	leakcheck.Check(t)
	dir, file := lookPathDir(t)
	onlyOwner := file("onlyowner", "#!/bin/sh\n", 0o700)
	private := filepath.Join(dir, "private")
	require.NoError(t, os.Mkdir(private, 0o700))
	hidden := filepath.Join(private, "run")
	require.NoError(t, os.WriteFile(hidden, []byte("#!/bin/sh\n"), 0o755))
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	groupOnly := file("grouponly", "#!/bin/sh\n", 0o750)
	require.NoError(t, os.Chown(groupOnly, 0, 4242))
	for _, tc := range []struct {
		name    string
		program string
		cred    *syscall.Credential
		want    int
	}{
		{"a script", file("ok", "#!/bin/sh\nexit 0\n", 0o755), nobody, 0},
		{"only for its owner", onlyOwner, nobody, 126},
		// 0755 itself, in a directory the user may not search.
		{"in a private directory", hidden, nobody, 126},
		{"interpreter only for its owner", file("userinterp", "#!"+onlyOwner+"\n", 0o755), nobody, 126},
		{"for a supplementary group", groupOnly, &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{4242}}, 0},
		{"for the primary group", groupOnly, &syscall.Credential{Uid: 65534, Gid: 4242, Groups: []uint32{}}, 0},
		// Root's own groups are not the child's: cleared, none is left.
		{"groups cleared", groupOnly, nobody, 126},
		{"root", onlyOwner, &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{}}, 0},
	} {
		t.Run(fmt.Sprintf("%s for uid %d", tc.name, tc.cred.Uid), func(t *testing.T) {
			_, err := LookPath(tc.program, tc.cred)
			require.Equal(t, tc.want, lookPathCode(err), "LookPath(%q) as %+v: %v", tc.program, *tc.cred, err)
		})
	}
	// The threads that took the child's credentials are gone, and the
	// agent's are as they were.
	require.Equal(t, 0, os.Geteuid())
	require.Eventually(t, func() bool { return len(threadsWithUid(t, 65534)) == 0 }, 5*time.Second, 10*time.Millisecond,
		"threads left with uid 65534: %v", threadsWithUid(t, 65534))
}

// threadsWithUid lists this process's threads whose real, effective,
// saved or file system uid is uid.
func threadsWithUid(t *testing.T, uid int) []string {
	t.Helper()
	files, err := filepath.Glob("/proc/self/task/*/status")
	require.NoError(t, err)
	var found []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			ids, ok := strings.CutPrefix(line, "Uid:")
			if ok && slices.Contains(strings.Fields(ids), strconv.Itoa(uid)) {
				found = append(found, f)
			}
		}
	}
	return found
}

// TestLookPathPrivatePathEntry: a directory on PATH that the child's user
// may not search is passed over, as a shell and a stream child's start
// pass it: a program found later runs, and one found nowhere is 127, not
// the 126 of the directory's refusal.
func TestLookPathPrivatePathEntry(t *testing.T) {
	requireRoot(t, "checking for another user")
	leakcheck.Check(t)
	dir, _ := lookPathDir(t)
	private := filepath.Join(dir, "private")
	public := filepath.Join(dir, "public")
	require.NoError(t, os.Mkdir(private, 0o700))
	require.NoError(t, os.Mkdir(public, 0o755))
	for _, d := range []string{private, public} {
		require.NoError(t, os.WriteFile(filepath.Join(d, "both"), []byte("#!/bin/sh\n"), 0o755))
	}
	t.Setenv("PATH", private+":"+public)
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	path, err := LookPath("both", nobody)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(public, "both"), path)
	_, err = LookPath("nowhere", nobody)
	require.Equal(t, 127, lookPathCode(err), "LookPath(nowhere): %v", err)
}

// TestLookPathFor: a start with no Path looks its program up as its child
// will run it: on the PATH of the child's own environment, a relative
// name from the child's directory, and for the child's user.
func TestLookPathFor(t *testing.T) {
	requireRoot(t, "checking for another user")
	leakcheck.Check(t)
	dir, file := lookPathDir(t)
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "tool"), []byte("#!/bin/sh\n"), 0o755))
	onlyOwner := file("onlyowner", "#!/bin/sh\n", 0o700)
	t.Setenv("PATH", bin)
	private := filepath.Join(dir, "private")
	require.NoError(t, os.Mkdir(private, 0o700))
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	for _, tc := range []struct {
		name string
		spec Spec
		want string // the path found, "" for none
		code int
	}{
		{"the child's PATH", Spec{Program: "tool", Env: []string{"PATH=" + bin, "PATH=/nonexistent"}}, "", 127},
		{"the agent's PATH without an environment", Spec{Program: "tool"}, filepath.Join(bin, "tool"), 0},
		{"an environment without PATH", Spec{Program: "tool", Env: []string{"A=1"}}, filepath.Join(bin, "tool"), 0},
		{"a relative name from Dir", Spec{Program: "./bin/tool", Dir: dir}, filepath.Join(bin, "tool"), 0},
		{"a relative PATH entry from Dir", Spec{Program: "tool", Dir: dir, Env: []string{"PATH=bin"}}, filepath.Join(bin, "tool"), 0},
		{"for the child's user", Spec{Program: onlyOwner, Credential: nobody}, "", 126},
		{"for the child's user on PATH", Spec{Program: "tool", Credential: nobody}, filepath.Join(bin, "tool"), 0},
		{"for root", Spec{Program: onlyOwner}, onlyOwner, 0},
		// The directory is named, not the program (it was "start cat:
		// permission denied").
		{"a Dir the child's user may not enter", Spec{Program: filepath.Join(bin, "tool"), Dir: private, Credential: nobody}, "", 126},
		{"a Dir that is not there", Spec{Program: filepath.Join(bin, "tool"), Dir: filepath.Join(dir, "gone")}, "", 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, err := lookPathFor(&tc.spec)
			require.Equal(t, tc.code, lookPathCode(err), "lookPathFor(%+v): %v", tc.spec, err)
			require.Equal(t, tc.want, path)
			if tc.spec.Dir != "" && err != nil {
				require.ErrorContains(t, err, "working directory "+tc.spec.Dir)
			}
		})
	}
}
