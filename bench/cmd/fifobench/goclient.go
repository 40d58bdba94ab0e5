//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// clientEnv, set to 1, makes this binary (the harness, or its test binary)
// the Go client: the fallback for bench/client.c where no C compiler is,
// with the same arguments and output.
const clientEnv = "FIFOBENCH_CLIENT"

// goClient is the Go client's main. Like the C client, it measures on one
// thread with blocking system calls of its own: runtime.LockOSThread and
// raw unix calls, no os.File (whose reads park the goroutine in the
// poller and resume it on another thread).
func goClient(args []string) int {
	runtime.LockOSThread()
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	mode := fs.String("m", "ping", "ping, req, tput or spawn")
	n := fs.Int("n", 1000, "samples")
	warm := fs.Int("w", 50, "warm-up runs, not reported")
	fresh := fs.Bool("f", false, "ping: a fresh writer per line")
	sync := fs.String("s", "", "ping: read OUT up to this byte first")
	mib := fs.Int("b", 64, "tput: MiB to send")
	if fs.Parse(args) != nil {
		return 2
	}
	res, err := takeStdout()
	if err == nil {
		err = runGoClient(res, *mode, fs.Args(), *n, *warm, *fresh, *sync, *mib)
	}
	if err == nil {
		err = res.Flush()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}
	return 0
}

func runGoClient(res *bufio.Writer, mode string, rest []string, n, warm int, fresh bool, sync string, mib int) error {
	if mode == "spawn" {
		if len(rest) == 0 {
			return errors.New("spawn: no program")
		}
		return goSpawn(res, n, warm, rest)
	}
	if len(rest) != 2 {
		return errors.New("want IN and OUT")
	}
	in, out := rest[0], rest[1]
	switch mode {
	case "ping":
		return goPing(res, in, out, n, warm, fresh, sync)
	case "req":
		return goReq(res, in, out, n, warm)
	case "tput":
		return goTput(res, in, out, mib)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// takeStdout keeps stdout for the samples and puts /dev/null in its place,
// so nothing a spawned program prints mixes with them.
func takeStdout() (*bufio.Writer, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("dup stdout: %w", err)
	}
	null, err := unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/null: %w", err)
	}
	defer unix.Close(null)
	if err := unix.Dup2(null, 1); err != nil {
		return nil, fmt.Errorf("dup2 /dev/null: %w", err)
	}
	return bufio.NewWriterSize(os.NewFile(uintptr(fd), "results"), 1<<20), nil
}

// openBoth opens OUT for reading, then IN for writing, as a client does.
func openBoth(inPath, outPath string) (in, out int, err error) {
	if out, err = openFIFO(outPath, unix.O_RDONLY); err != nil {
		return -1, -1, err
	}
	if in, err = openFIFO(inPath, unix.O_WRONLY); err != nil {
		unix.Close(out)
		return -1, -1, err
	}
	return in, out, nil
}

func openFIFO(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			if err != nil {
				return -1, fmt.Errorf("open %s: %w", path, err)
			}
			return fd, nil
		}
	}
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		b = b[n:]
	}
	return nil
}

// readSome reads what is there, at least one byte; end-of-file is an error.
func readSome(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		switch {
		case n > 0:
			return n, nil
		case err == unix.EINTR:
		case err != nil:
			return 0, fmt.Errorf("read: %w", err)
		default:
			return 0, errors.New("read: end of file")
		}
	}
}

func goPing(res *bufio.Writer, inPath, outPath string, n, warm int, fresh bool, sync string) error {
	out, err := openFIFO(outPath, unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer unix.Close(out)
	in := -1
	if !fresh {
		if in, err = openFIFO(inPath, unix.O_WRONLY); err != nil {
			return err
		}
		defer unix.Close(in)
	}
	buf := make([]byte, 64)
	for sync != "" { // a terminal child says when it is ready
		if _, err := readSome(out, buf[:1]); err != nil {
			return err
		}
		if buf[0] == sync[0] {
			break
		}
	}
	line := []byte("x\n")
	for i := -warm; i < n; i++ {
		begin := time.Now()
		if fresh {
			w, err := openFIFO(inPath, unix.O_WRONLY)
			if err != nil {
				return err
			}
			err = writeAll(w, line)
			unix.Close(w)
			if err != nil {
				return err
			}
		} else if err := writeAll(in, line); err != nil {
			return err
		}
		for got := 0; got < len(line); {
			k, err := readSome(out, buf[got:len(line)])
			if err != nil {
				return err
			}
			got += k
		}
		took := time.Since(begin)
		if !bytes.Equal(buf[:len(line)], line) {
			return fmt.Errorf("echo %q differs from %q", buf[:len(line)], line)
		}
		if i >= 0 {
			fmt.Fprintln(res, took.Nanoseconds())
		}
	}
	return nil
}

func goReq(res *bufio.Writer, inPath, outPath string, n, warm int) error {
	in, out, err := openBoth(inPath, outPath)
	if err != nil {
		return err
	}
	defer unix.Close(out)
	defer unix.Close(in)
	buf := make([]byte, 64<<10)
	have := 0
	for i := -warm; i < n; i++ {
		begin := time.Now()
		if err := writeAll(in, []byte("x\n")); err != nil {
			return err
		}
		if have, err = awaitExit(out, buf, have); err != nil {
			return err
		}
		if i >= 0 {
			fmt.Fprintln(res, time.Since(begin).Nanoseconds())
		}
	}
	return nil
}

// awaitExit reads frames into buf, which holds have bytes already, until a
// complete line holds an exit frame; it returns how many bytes are left.
func awaitExit(fd int, buf []byte, have int) (int, error) {
	for {
		for {
			nl := bytes.IndexByte(buf[:have], '\n')
			if nl < 0 {
				break
			}
			line := buf[:nl]
			if bytes.Contains(line, []byte(`"type":"error"`)) {
				return 0, fmt.Errorf("error frame: %s", line)
			}
			exit := bytes.Contains(line, []byte(`"type":"exit"`))
			have = copy(buf, buf[nl+1:have])
			if exit {
				return have, nil
			}
		}
		if have == len(buf) {
			return 0, errors.New("frame too long")
		}
		k, err := readSome(fd, buf[have:])
		if err != nil {
			return 0, err
		}
		have += k
	}
}

func goSpawn(res *bufio.Writer, n, warm int, argv []string) error {
	path := argv[0]
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}}
	for i := -warm; i < n; i++ {
		begin := time.Now()
		pid, err := syscall.ForkExec(path, argv, attr)
		if err != nil {
			return fmt.Errorf("spawn %s: %w", path, err)
		}
		var ws syscall.WaitStatus
		for {
			if _, err = syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
		took := time.Since(begin)
		if err != nil || !ws.Exited() || ws.ExitStatus() != 0 {
			return fmt.Errorf("spawn %s: status %v, %v", path, ws, err)
		}
		if i >= 0 {
			fmt.Fprintln(res, took.Nanoseconds())
		}
	}
	return nil
}
