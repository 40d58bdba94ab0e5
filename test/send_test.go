//go:build linux

package test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// sendResult is how one "fifobridge send" ended.
type sendResult struct {
	code   int
	stdout []byte
	stderr string
	took   time.Duration
}

// sendCmd is a started "fifobridge send".
type sendCmd struct {
	cmd   *exec.Cmd
	out   *outputFiles
	begin time.Time
	done  chan struct{}
	res   sendResult
}

// startSend starts "fifobridge send -dir DIR ARGS..." with stdin as its
// standard input (none when nil); it is killed when t ends if still running.
func startSend(t *testing.T, dir string, env []string, stdin []byte, args ...string) *sendCmd {
	t.Helper()
	s := startSendCmd(t, dir, env, stdin, args...)
	s.start(t)
	return s
}

// startSendCmd prepares "fifobridge send -dir DIR ARGS..." for start.
func startSendCmd(t *testing.T, dir string, env []string, stdin []byte, args ...string) *sendCmd {
	t.Helper()
	s, err := newSendCmd(agentEnv(t), dir, env, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newSendCmd is startSendCmd for any goroutine: base is agentEnv's. The
// send writes its stdout and stderr into files of its own (outputFiles),
// so nothing it wrote can be lost however late the test reads it.
func newSendCmd(base []string, dir string, env []string, stdin []byte, args ...string) (*sendCmd, error) {
	if dir != "" {
		args = append([]string{"-dir", dir}, args...)
	}
	s := &sendCmd{done: make(chan struct{})}
	s.cmd = exec.Command(agentBin, append([]string{"send"}, args...)...)
	s.cmd.Env = append(base, env...)
	out, err := newOutputFiles(stdin)
	if err != nil {
		return nil, err
	}
	s.out = out
	s.cmd.Stdout, s.cmd.Stderr = out.stdout, out.stderr
	if out.stdin != nil {
		s.cmd.Stdin = out.stdin
	}
	return s, nil
}

// start starts the send; it is killed when t ends if still running.
func (s *sendCmd) start(t *testing.T) {
	t.Helper()
	if err := s.startNow(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
}

// startNow starts the send and a goroutine that waits for it and then
// reads its output into s.res, and closes done.
func (s *sendCmd) startNow() error {
	s.begin = time.Now()
	if err := s.cmd.Start(); err != nil {
		s.out.close()
		return fmt.Errorf("start fifobridge send: %w", err)
	}
	go func() {
		err := s.cmd.Wait()
		stdout, stderr := s.out.read()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			stderr += "\n(wait: " + err.Error() + ")"
		}
		s.res = sendResult{code: exitCode(s.cmd.ProcessState), stdout: stdout, stderr: stderr, took: time.Since(s.begin)}
		close(s.done)
	}()
	return nil
}

// wait waits at most timeout for send to exit.
func (s *sendCmd) wait(t *testing.T, timeout time.Duration) sendResult {
	t.Helper()
	select {
	case <-s.done:
		return s.res
	case <-time.After(timeout):
		s.cmd.Process.Kill()
		<-s.done
		t.Fatalf("fifobridge %q did not exit within %v; stderr:\n%s", s.cmd.Args[1:], timeout, s.res.stderr)
		return s.res
	}
}

// runSend runs "fifobridge send -dir DIR ARGS..." to completion, at most
// hangTimeout.
func runSend(t *testing.T, dir string, stdin []byte, args ...string) sendResult {
	t.Helper()
	return startSend(t, dir, nil, stdin, args...).wait(t, hangTimeout)
}

// waitServing waits until the agent reads its input FIFO.
func waitServing(t *testing.T, a *agent) {
	t.Helper()
	openWriter(t, a.in).close()
}

// requireNoReplies fails t unless DIR/replies is empty or absent.
func requireNoReplies(t *testing.T, dir string) {
	t.Helper()
	if names := replyNames(t, dir); len(names) > 0 {
		t.Fatalf("reply FIFOs left in %s/replies: %v", dir, names)
	}
}

// requireCode fails t unless res has exit code want.
func (res sendResult) requireCode(t *testing.T, want int) {
	t.Helper()
	if res.code != want {
		t.Fatalf("send exited with %d, want %d; stdout %q stderr:\n%s", res.code, want, res.stdout, res.stderr)
	}
}

// TestSendConcurrent runs 32 sends at once; each gets exactly its own
// output and exit code.
func TestSendConcurrent(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	program := sh(t, `read x; echo "got $x"; echo "err $x" >&2; exit $(( x * 37 % 256 ))`)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: program})
	openReader(t, a.out) // nothing may arrive here, but a reader is there
	waitServing(t, a)

	const n = 32
	sends := make([]*sendCmd, n)
	for i := range n {
		// Half send TEXT, half their stdin.
		if i%2 == 0 {
			sends[i] = startSend(t, a.dir, nil, nil, strconv.Itoa(i))
		} else {
			sends[i] = startSend(t, a.dir, nil, []byte(fmt.Sprintf("%d\n", i)))
		}
	}
	for i, s := range sends {
		res := s.wait(t, 3*hangTimeout)
		if want := fmt.Sprintf("got %d\n", i); res.code != i*37%256 || string(res.stdout) != want || res.stderr != fmt.Sprintf("err %d\n", i) {
			t.Errorf("send %d: code %d stdout %q stderr %q; want %d %q %q", i, res.code, res.stdout, res.stderr, i*37%256, want, fmt.Sprintf("err %d\n", i))
		}
	}
	requireNoReplies(t, a.dir)
	st := a.waitExecStatus("32 completed", func(st status) bool { return st.Requests.Completed == n })
	if st.Requests.Rejected != 0 || st.Requests.Active != 0 {
		t.Errorf("status counts %+v after %d sends", st.Requests, n)
	}
}

// TestSendBinary checks stdin, stdout and stderr pass through send byte
// for byte: NUL bytes, invalid UTF-8, split characters.
func TestSendBinary(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	// The child copies its stdin to both stdout and stderr.
	program := append(sh(t, `"$1" tee /proc/self/fd/2`), busybox)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: program})
	openReader(t, a.out)
	waitServing(t, a)

	random := make([]byte, 200<<10)
	rand.NewChaCha8([32]byte{9}).Read(random)
	for name, data := range map[string][]byte{
		"200 KiB random":      random,
		"NUL bytes":           {0, 0, 'a', 0, '\n', 0},
		"invalid UTF-8":       {'a', 0xff, 0xc3, 0x28, 0xe2, 0x82, '\n'},
		"UTF-8 text":          []byte("grüße € 😀\n\ttab \"quote\" \\ back\r\n"),
		"no trailing newline": []byte("no newline"),
	} {
		res := runSend(t, a.dir, data)
		if res.code != 0 || !bytes.Equal(res.stdout, data) || res.stderr != string(data) {
			t.Errorf("%s: send of %d bytes exited %d with %d bytes on stdout (equal: %v) and %d on stderr (equal: %v)",
				name, len(data), res.code, len(res.stdout), bytes.Equal(res.stdout, data), len(res.stderr), res.stderr == string(data))
		}
	}
	res := runSend(t, a.dir, nil, "words", "joined", " by", "spaces")
	if res.code != 0 || string(res.stdout) != "words joined  by spaces\n" {
		t.Errorf("send TEXT...: exit %d stdout %q, want 0 %q", res.code, res.stdout, "words joined  by spaces\n")
	}
	requireNoReplies(t, a.dir)
}

// TestSendExitCodes checks send's exit codes and that it removes its reply
// FIFO on every path.
func TestSendExitCodes(t *testing.T) {
	t.Parallel()
	requireBusybox(t)

	t.Run("child exit codes", func(t *testing.T) {
		checkLeaks(t, false)
		program := sh(t, `read c; case "$c" in kill) kill -KILL $$;; esac; exit "$c"`)
		a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: program})
		openReader(t, a.out)
		// DIR/out is there before the agent reads DIR/in: a send before
		// then finds no agent, as it should.
		waitServing(t, a)
		for _, tc := range []struct {
			input string
			want  int
		}{{"0", 0}, {"3", 3}, {"42", 42}, {"255", 255}, {"kill", 137}} {
			res := runSend(t, a.dir, nil, tc.input)
			res.requireCode(t, tc.want)
		}
		requireNoReplies(t, a.dir)
	})

	t.Run("124 on timeout", func(t *testing.T) {
		for _, tc := range []struct {
			name       string
			agentFlags []string
			sendArgs   []string
		}{
			{"send -timeout", nil, []string{"-timeout", "300ms"}},
			{"send -timeout shorter than agent -timeout", []string{"-timeout", "10s"}, []string{"-timeout", "300ms"}},
			{"agent -timeout, send -timeout 0", []string{"-timeout", "300ms"}, []string{"-timeout", "0"}},
			// send's -timeout is not given: the agent's limit applies,
			// not send's default 30 s.
			{"agent -timeout, send default", []string{"-timeout", "300ms"}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				checkLeaks(t, false)
				a := startAgent(t, agentConfig{flags: append([]string{"-mode", "exec"}, tc.agentFlags...), program: []string{busybox, "sleep", "30"}})
				openReader(t, a.out)
				waitServing(t, a)
				res := runSend(t, a.dir, nil, tc.sendArgs...)
				res.requireCode(t, 124)
				requireNoReplies(t, a.dir)
				// The child is gone, not left to run its 30 s.
				var kids []procStat
				if !eventually(5*time.Second, func() bool { kids = childrenOf(a.pid); return len(kids) == 0 }) {
					t.Fatalf("the timed-out child still runs:%s", describe(kids))
				}
				a.waitExecStatus("the request completed", func(st status) bool {
					return st.Requests.Completed == 1 && st.Requests.Active == 0
				})
			})
		}
	})

	t.Run("125 without agent", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			setup func(t *testing.T, dir string)
		}{
			{"directory missing", func(t *testing.T, dir string) {}},
			{"in missing", func(t *testing.T, dir string) {
				if err := os.MkdirAll(filepath.Join(dir, "replies"), 0o755); err != nil {
					t.Fatal(err)
				}
			}},
			{"in is a FIFO nobody reads", func(t *testing.T, dir string) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mkfifo(filepath.Join(dir, "in"), 0o600); err != nil {
					t.Fatal(err)
				}
			}},
			{"in is a regular file", func(t *testing.T, dir string) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "in"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}},
			{"agent stopped", func(t *testing.T, dir string) {
				a := startAgent(t, agentConfig{dir: dir, flags: []string{"-mode", "exec"}, program: []string{busybox, "true"}})
				openWriter(t, a.in).close()
				if code := a.stop(); code != 0 {
					t.Fatalf("agent exited with %d, want 0", code)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				checkLeaks(t, false)
				dir := filepath.Join(t.TempDir(), "fb")
				tc.setup(t, dir)
				in := regularContent(filepath.Join(dir, "in"))
				// -timeout 3s: a send that waits for an answer that
				// cannot come exits 124, not 125.
				res := runSend(t, dir, nil, "-timeout", "3s", "hello")
				res.requireCode(t, 125)
				requireOneLine(t, "send", res.stderr)
				requireNoReplies(t, dir)
				if after := regularContent(filepath.Join(dir, "in")); !bytes.Equal(in, after) {
					t.Fatalf("send wrote %q into %s/in with no agent", after, dir)
				}
			})
		}
	})

	t.Run("125 when rejected", func(t *testing.T) {
		// Executable at the agent's start (else the agent would not
		// start: 126), not when the request comes.
		noExec := filepath.Join(t.TempDir(), "noexec")
		if err := writeUnforked(noExec, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name    string
			flags   []string
			program []string
			input   []byte
		}{
			{"request too large", []string{"-max-request", "1KiB"}, []string{busybox, "cat"}, bytes.Repeat([]byte("x"), 4000)},
			{"program not executable", nil, []string{noExec}, []byte("hi\n")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				checkLeaks(t, false)
				a := startAgent(t, agentConfig{flags: append([]string{"-mode", "exec"}, tc.flags...), program: tc.program})
				r := openReader(t, a.out)
				waitServing(t, a)
				if tc.program[0] == noExec {
					if err := os.Chmod(noExec, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				// -timeout 5s: a send that waits for an answer that
				// does not come exits 124, not 125.
				res := runSend(t, a.dir, tc.input, "-timeout", "5s")
				res.requireCode(t, 125)
				requireOneLine(t, "send", res.stderr)
				requireNoReplies(t, a.dir)
				a.requireRunning()
				// The rejection went to send's reply FIFO, where it could
				// be named; at least nothing else arrives on out.
				if tc.name != "request too large" {
					r.expectQuiet(100 * time.Millisecond)
				}
			})
		}
	})

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("reply FIFO removed on "+sig.String(), func(t *testing.T) {
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{busybox, "sleep", "30"}})
			openReader(t, a.out)
			waitServing(t, a)
			s := startSend(t, a.dir, nil, nil, "slow")
			// Wait until the request runs and its reply FIFO exists.
			if !eventually(hangTimeout, func() bool {
				ents, _ := os.ReadDir(filepath.Join(a.dir, "replies"))
				return len(ents) == 1 && len(childrenOf(a.pid)) == 1
			}) {
				t.Fatalf("the request did not start")
			}
			s.cmd.Process.Signal(sig)
			// Not a speed claim: the request would run 30 s, send's
			// own -timeout is 30 s.
			res := s.wait(t, 5*time.Second)
			if res.code == 0 {
				t.Fatalf("send exited 0 after %v; stderr:\n%s", sig, res.stderr)
			}
			requireNoReplies(t, a.dir)
			a.requireRunning()
		})
	}

	t.Run("125 when the agent dies during the request", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{busybox, "sleep", "30"}})
		openReader(t, a.out)
		waitServing(t, a)
		s := startSend(t, a.dir, nil, nil, "slow")
		if !eventually(hangTimeout, func() bool { return len(childrenOf(a.pid)) == 1 }) {
			t.Fatalf("the request did not start")
		}
		a.signal(syscall.SIGKILL)
		a.wait(hangTimeout)
		res := s.wait(t, 5*time.Second)
		res.requireCode(t, 125)
		requireOneLine(t, "send", res.stderr)
		requireNoReplies(t, a.dir)
	})
}

// TestSendEnv checks send takes its directory from FIFOBRIDGE_DIR, and
// that -dir wins over it.
func TestSendEnv(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requireBusybox(t)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{busybox, "cat"}})
	openReader(t, a.out)
	waitServing(t, a)
	res := startSend(t, "", []string{"FIFOBRIDGE_DIR=" + a.dir}, nil, "via", "env").wait(t, hangTimeout)
	if res.code != 0 || string(res.stdout) != "via env\n" {
		t.Fatalf("send with FIFOBRIDGE_DIR: exit %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
	}
	res = startSend(t, a.dir, []string{"FIFOBRIDGE_DIR=" + t.TempDir()}, nil, "flag", "wins").wait(t, hangTimeout)
	if res.code != 0 || string(res.stdout) != "flag wins\n" {
		t.Fatalf("send with -dir and another FIFOBRIDGE_DIR: exit %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
	}
}

// regularContent returns the content of path when it is a regular file,
// else nil (reading a FIFO would block).
func regularContent(path string) []byte {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, _ := os.ReadFile(path)
	return b
}
